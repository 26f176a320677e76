// The Perfetto sink's waits, read back from its bytes: every wait's slices,
// their times and tracks, the holder's and releaser's tids and the wake-up
// flows, for tids and times whose varints are of every length (one byte to
// five), times below 2^28, waits across a 2^28 ns edge, holders and
// releasers that change from wait to wait of one object and waiter, open
// waits and a waiter that releases itself. Most waits are copies of an
// image with their varying bytes stored in place (perfettoexport.h,
// WaitImage): a varint stored with the wrong length or fill breaks the
// values or the packets' framing here.
#include <cstdint>
#include <cstdio>
#include <deque>
#include <vector>

#include "exportoutput.h"
#include "perfettoexport.h"

using namespace tmon;

namespace {

int failures = 0;

void check(bool ok, const char *what, size_t at) {
  if (ok) return;
  if (++failures <= 20) std::fprintf(stderr, "FAIL event %zu: %s\n", at, what);
}

// The fields of a TrackEvent this test looks at.
struct Event {
  uint64_t t = 0, type = 0, track = 0;
  uint64_t holder = 0, releaser = 0;  // 0: no such argument
  uint64_t flow = 0, terminatingFlow = 0;
};

// Protobuf's wire format, as far as a Trace's track events need it.
struct Reader {
  const uint8_t *p, *end;
  bool ok = true;
  bool more() const { return ok && p < end; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) break;
      const uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  uint64_t fixed64() {
    uint64_t v = 0;
    if (end - p < 8) return ok = false, 0;
    for (int i = 0; i < 8; i++) v |= uint64_t(p[i]) << (8 * i);
    p += 8;
    return v;
  }
  Reader sub() {
    const uint64_t n = varint();
    if (uint64_t(end - p) < n) return ok = false, Reader{p, p};
    Reader r{p, p + n};
    p += n;
    return r;
  }
  void skip(uint32_t wire) {
    if (wire == 0)
      varint();
    else if (wire == 1)
      p += 8;
    else if (wire == 2)
      sub();
    else if (wire == 5)
      p += 4;
    else
      ok = false;
    if (p > end) ok = false;
  }
};

// A DebugAnnotation: its interned name (3 holder_tid, 4 released_by_tid)
// and its integer.
void annotation(Reader r, Event *e) {
  uint64_t name = 0, value = 0;
  while (r.more()) {
    const uint64_t key = r.varint();
    if (key == (1 << 3 | 0))
      name = r.varint();
    else if (key == (3 << 3 | 0))
      value = r.varint();
    else
      r.skip(uint32_t(key & 7));
  }
  if (name == 3) e->holder = value;
  if (name == 4) e->releaser = value;
}

bool trackEvent(Reader r, Event *e) {
  while (r.more()) {
    const uint64_t key = r.varint();
    if (key == (9 << 3 | 0))
      e->type = r.varint();
    else if (key == (11 << 3 | 0))
      e->track = r.varint();
    else if (key == (4 << 3 | 2))
      annotation(r.sub(), e);
    else if (key == (47 << 3 | 1))
      e->flow = r.fixed64();
    else if (key == (48 << 3 | 1))
      e->terminatingFlow = r.fixed64();
    else
      r.skip(uint32_t(key & 7));
  }
  return r.ok;
}

// Every TracePacket's track event, in order; false when the bytes are
// not a Trace.
bool readEvents(const QByteArray &bytes, std::vector<Event> *events) {
  Reader trace{reinterpret_cast<const uint8_t *>(bytes.constData()),
               reinterpret_cast<const uint8_t *>(bytes.constData()) + bytes.size()};
  while (trace.more()) {
    if (trace.varint() != (1 << 3 | 2)) return false;
    Reader packet = trace.sub();
    Event e;
    bool isEvent = false;
    while (packet.more()) {
      const uint64_t key = packet.varint();
      if (key == (8 << 3 | 0))
        e.t = packet.varint();
      else if (key == (11 << 3 | 2)) {
        if (!trackEvent(packet.sub(), &e)) return false;
        isEvent = true;
      } else {
        packet.skip(uint32_t(key & 7));
      }
    }
    if (!packet.ok) return false;
    if (isEvent) events->push_back(e);
  }
  return trace.ok;
}

// The sink with its callbacks open to the test.
class Sink : public PerfettoSink {
 public:
  using PerfettoSink::PerfettoSink;
  using PerfettoSink::process;
  using PerfettoSink::startAt;
  using PerfettoSink::thread;
  using PerfettoSink::wait;
};

constexpr uint64_t kThreadTrack = 1ull << 32;
uint64_t objectWaiterTrack(uint32_t object, uint32_t tid) {
  return (5ull << 56) | (uint64_t(object & 0xffffffu) << 24) | (tid & 0xffffffu);
}

}  // namespace

int main() {
  // Tids of varints of 1, 2, 3, 4 and 5 bytes.
  const std::vector<uint32_t> tids = {7, 300, 20000, 3000000, 300000000};
  std::deque<ExportObject> objects(3);
  const char *names[] = {"mutex a", "cond b", "sleep c"};
  for (uint32_t i = 0; i < 3; i++) {
    ExportObject &o = objects[i];
    o.id = i == 2 ? 0 : i + 1;  // the last without a track of its own
    o.index = i;
    o.name = QString::fromLatin1(names[i]);
    o.nameUtf8 = o.name.toUtf8();
    if (i == 0) o.callSite = QStringLiteral("f.c:12"), o.callSiteUtf8 = o.callSite.toUtf8();
  }
  // Times whose high parts (above their low 28 bits) are 0, cross an edge,
  // are of 1, 3 and 4 bytes, another of 4, and of 5.
  const std::vector<int64_t> bases = {1000,
                                      (1ll << 28) - 40000,
                                      5ll << 28,
                                      (1ll << 42) + 12345,
                                      (1ll << 49) + 99,
                                      (1ll << 49) + (3ll << 28) + 5,
                                      (1ll << 56) + 1};
  const FinalState states[] = {FinalState::BlockedMutex, FinalState::BlockedCond};

  ExportOutput out;
  out.openBuffer(false);
  Sink sink(&out);
  sink.startAt(0, 4242);
  SessionInfo info;
  info.pid = 4242;
  info.exe = QStringLiteral("/bin/waits");
  sink.process(info, 1);
  for (uint32_t tid : tids) {
    ExportThread t;
    t.tid = tid;
    t.name = QStringLiteral("t%1").arg(tid);
    sink.thread(t);
  }
  std::vector<Event> want;
  uint64_t flows = 0;
  for (int64_t base : bases) {
    int64_t t = base;
    for (const ExportObject &o : objects)
      for (FinalState state : states)
        for (uint32_t waiter : tids)
          for (size_t h = 0; h <= tids.size(); h++)
            for (size_t r = 0; r <= tids.size() + 1; r++)
              for (bool open : {false, true}) {
                ExportWait w;
                w.waiter = waiter;
                w.holder = h < tids.size() ? tids[h] : 0;
                w.releaser = r < tids.size() ? tids[r] : r == tids.size() ? 0 : waiter;
                w.start = t;
                w.end = t + 700 + int64_t(r) * 13;
                w.state = state;
                w.objectId = o.id;
                w.object = &o;
                w.open = open;
                t += 90;
                sink.wait(w);
                const uint64_t start = uint64_t(w.start), end = uint64_t(w.end);
                const uint64_t own = kThreadTrack | w.waiter;
                if (w.objectId) {
                  want.push_back({start, 1, objectWaiterTrack(w.objectId, w.waiter)});
                  want.push_back({end, 2, objectWaiterTrack(w.objectId, w.waiter)});
                }
                want.push_back({start, 1, own, w.holder, w.releaser});
                const bool flow = w.releaser && !w.open && w.releaser != w.waiter;
                if (flow) want.push_back({end, 3, kThreadTrack | w.releaser, 0, 0, ++flows});
                want.push_back({end, 2, own, 0, 0, 0, flow ? flows : 0});
              }
  }
  QString error;
  if (!sink.finish(&error)) {
    std::fprintf(stderr, "FAIL finish: %s\n", qPrintable(error));
    return 1;
  }
  std::vector<Event> got;
  if (!readEvents(out.buffer(), &got)) {
    std::fprintf(stderr, "FAIL the output is not a Trace of whole packets\n");
    return 1;
  }
  check(got.size() == want.size(), "as many track events as the waits give", got.size());
  for (size_t i = 0; i < got.size() && i < want.size(); i++) {
    const Event &g = got[i], &e = want[i];
    check(g.t == e.t, "time", i);
    check(g.type == e.type, "type", i);
    check(g.track == e.track, "track", i);
    check(g.holder == e.holder, "holder_tid", i);
    check(g.releaser == e.releaser, "released_by_tid", i);
    check(g.flow == e.flow && g.terminatingFlow == e.terminatingFlow, "flow ids", i);
  }
  std::printf("%zu waits' track events read back, %d failures\n", want.size(), failures);
  return failures ? 1 : 0;
}
