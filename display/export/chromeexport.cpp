#include "chromeexport.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "exportoutput.h"

namespace tmon {

namespace {
QByteArray quoted(const QString &s) {
  // A JSON string, escaped as QJsonDocument escapes it.
  QByteArray doc = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
  return doc.mid(1, doc.size() - 2);
}
}  // namespace

// Events are written straight into the output's buffer (ExportOutput::
// reserve): the states and waits are millions of events, and building each
// in a string of its own and appending it was most of the CPU.
namespace {
// Numbers are written eight digits at a time, with no loop and no
// division by 10 per digit (the digit loops were 40% of the Chrome writer's
// instructions: each event has two times, of up to 13 digits).
//
// Eight decimal digits of v (below 10^8) as eight bytes, the first digit
// in the lowest byte: v cut into two halves of four digits, each into two
// of two digits, each into digits, every lane at once in one 64-bit word
// (the multiplies by 10486 / 2^20 and 103 / 2^10 divide a lane by 100 and
// by 10, exactly below 43699 and 179).
inline uint64_t digits8(uint32_t v) {
  const uint64_t hi = v / 10000, lo = v - 10000 * hi;
  uint64_t x = hi | (lo << 32);
  uint64_t q = ((x * 10486) >> 20) & 0x0000007f0000007full;
  x = q | ((x - 100 * q) << 16);
  q = ((x * 103) >> 10) & 0x000f000f000f000full;
  return q | ((x - 10 * q) << 8);
}
constexpr uint64_t kAsciiZeros = 0x3030303030303030ull;
// v's eight digits at p, leading zeros kept.
inline char *put8(char *p, uint32_t v) {
  const uint64_t ascii = digits8(v) + kAsciiZeros;
  std::memcpy(p, &ascii, 8);
  return p + 8;
}
// v (below 10^8) without its leading zeros (0 is "0"). Writes 8 bytes at p.
inline char *putShort(char *p, uint32_t v) {
  const uint64_t d = digits8(v);
  // Zero bytes before the first digit (7 for 0: its last digit is kept).
  const int lead = __builtin_ctzll(d | (uint64_t(1) << 56)) / 8;
  const uint64_t ascii = (d + kAsciiZeros) >> (8 * lead);
  std::memcpy(p, &ascii, 8);
  return p + 8 - lead;
}
// v in decimal at p; writes up to 24 bytes at p (the events have room).
inline char *putDecimal(char *p, uint64_t v) {
  constexpr uint64_t k8 = 100000000, k16 = k8 * k8;
  if (v < k8) return putShort(p, uint32_t(v));
  if (v < k16) return put8(putShort(p, uint32_t(v / k8)), uint32_t(v % k8));
  p = putShort(p, uint32_t(v / k16));
  return put8(put8(p, uint32_t(v % k16 / k8)), uint32_t(v % k8));
}
// "00" to "99": four digits are two of these.
struct Pairs {
  char text[100][2];
};
constexpr Pairs kPairs = [] {
  Pairs d{};
  for (int i = 0; i < 100; i++) {
    d.text[i][0] = char('0' + i / 10);
    d.text[i][1] = char('0' + i % 10);
  }
  return d;
}();
// The four digits of v (below 10^4), leading zeros kept, the first in the
// lowest byte: a table of pairs (the eight digits' multiplies by
// reciprocals were a fifth of a state event's instructions).
inline uint32_t digits4(uint32_t v) {
  const uint32_t high = (v * 5243) >> 19;  // v / 100, exact below 43699
  uint16_t a, b;
  std::memcpy(&a, kPairs.text[high], 2);
  std::memcpy(&b, kPairs.text[v - 100 * high], 2);
  return a | uint32_t(b) << 16;
}
// v (below 10^4) without its leading zeros (0 is "0"). Writes 4 bytes at p.
inline char *putShort4(char *p, uint32_t v) {
  const uint32_t ascii = digits4(v);
  // '0' bytes before the first digit (3 for 0: its last digit is kept).
  const int lead = __builtin_ctz((ascii ^ 0x30303030u) | (1u << 24)) / 8;
  const uint32_t text = ascii >> (8 * lead);
  std::memcpy(p, &text, 4);
  return p + 4 - lead;
}
// ".000" to ".999": the nanoseconds of a time in microseconds.
struct Decimals {
  char text[1000][4];
};
constexpr Decimals kDecimals = [] {
  Decimals d{};
  for (int i = 0; i < 1000; i++) {
    d.text[i][0] = '.';
    d.text[i][1] = char('0' + i / 100);
    d.text[i][2] = char('0' + i / 10 % 10);
    d.text[i][3] = char('0' + i % 10);
  }
  return d;
}();
struct Text {
  char *p;
  template <size_t N>
  void lit(const char (&s)[N]) {
    std::memcpy(p, s, N - 1);
    p += N - 1;
  }
  void str(const std::string &s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  // A prefix made once (Head): copied whole, a fixed size, when it fits.
  // The short ones (a flow's, the pid's) in 32 or 64 bytes.
  void head(const std::string &s, size_t n) {
    if (n <= 32)
      std::memcpy(p, s.data(), 32);  // s is kHeadRoom long at least
    else if (n <= 64)
      std::memcpy(p, s.data(), 64);
    else if (n <= kHeadRoom)
      std::memcpy(p, s.data(), kHeadRoom);
    else
      std::memcpy(p, s.data(), n);
    p += n;
  }
  void num(uint64_t v) { p = putDecimal(p, v); }
  void num(int64_t v) {
    if (v < 0) *p++ = '-', v = -v;
    num(uint64_t(v));
  }
  void num(uint32_t v) { p = putDecimal(p, v); }
  // 'TID,"ts":' (16 bytes at most).
  void tidTs(const ChromeSink::TidText &t) {
    std::memcpy(p, t.text + t.from, 16);
    p += t.size - t.from;
  }
  // ',"pid":PID,"tid":TID,"ts":'.
  void pidTidTs(const ChromeSink::TidText &t) {
    std::memcpy(p, t.text, sizeof t.text);
    p += t.size;
  }
  // The tid alone (a wait's holder or releaser).
  void tid(const ChromeSink::TidText &t) {
    std::memcpy(p, t.text + t.from, 16);
    p += t.digits;
  }
  void num(int v) { num(int64_t(v)); }
  // Microseconds with three decimals: nanoseconds, exactly. Below 100 s
  // (10^8 us), four digits at a time: below 10 ms the microseconds' four
  // digits alone, without their leading zeros; above, the tens of
  // milliseconds' digits from last (the times of a thread's events come in
  // order: they change every few events) and then the four.
  void ts(int64_t ns, ChromeSink::TensText *last) {
    const uint64_t u = uint64_t(ns);  // a negative time is above 2^63: longTs
    uint32_t below;                   // the nanoseconds below 10 ms
    if (u < 10000000) {
      below = uint32_t(u);
      const uint32_t us = below / 1000;
      p = putShort4(p, us);
      return decimals(below - 1000 * us);
    }
    if (__builtin_expect(u >= 100000000000, 0)) return longTs(ns);
    const uint32_t tens = uint32_t(u / 10000000);
    below = uint32_t(u - uint64_t(tens) * 10000000);
    if (__builtin_expect(tens != last->tens, 0)) last->set(tens);
    std::memcpy(p, &last->text, 8);
    p += last->size;
    const uint32_t us = below / 1000;
    const uint32_t digits = digits4(us);
    std::memcpy(p, &digits, 4);
    p += 4;
    decimals(below - 1000 * us);
  }
  void decimals(uint32_t ns) {
    if (!ns) return;
    std::memcpy(p, kDecimals.text[ns], 4);
    p += 4;
  }
  [[gnu::noinline]] void longTs(int64_t ns) {
    uint64_t u = uint64_t(ns);
    if (ns < 0) *p++ = '-', u = 0 - u;
    const uint64_t us = u / 1000;
    p = putDecimal(p, us);
    decimals(uint32_t(u - 1000 * us));
  }
  static constexpr size_t kHeadRoom = 96;  // the longest head half.tmcap and the corpus have: 81
};
// Room for an event's numbers and fixed words; names are added to it.
constexpr size_t kEventRoom = 320 + Text::kHeadRoom;
// A prefix padded to Text::kHeadRoom bytes, and its length.
ChromeSink::Head padded(std::string s) {
  ChromeSink::Head h;
  h.size = s.size();
  s.resize(std::max(s.size(), Text::kHeadRoom), ' ');
  h.text = std::move(s);
  return h;
}
}  // namespace

void ChromeSink::TensText::set(uint32_t t) {
  char b[8] = {};
  size = uint32_t(putShort4(b, t) - b);
  std::memcpy(&text, b, 8);
  tens = t;
}

inline char *ChromeSink::begin(size_t n) {
  char *p = out_->reserve(n + 64);
  if (__builtin_expect(!any_, 0)) return first(p);
  std::memcpy(p, ",\n", 2);
  return p + 2;
}

char *ChromeSink::first(char *p) {
  if (!opened_) {
    opened_ = true;
    static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    std::memcpy(p, head, sizeof head - 1);
    p += sizeof head - 1;
  }
  any_ = true;
  return p;
}

inline const ChromeSink::TidText &ChromeSink::tidText(uint32_t tid) {
  TidText &t = tidTexts_[(tid * 2654435761u) >> 20];  // 4096 entries
  if (t.tid != tid || !t.size) makeTidText(tid, &t);
  return t;
}

void ChromeSink::makeTidText(uint32_t tid, TidText *t) {
  Text e{t->text};
  e.lit(",\"pid\":");
  e.num(pid());
  e.lit(",\"tid\":");
  t->from = uint32_t(e.p - t->text);
  e.num(tid);
  t->digits = uint32_t(e.p - t->text) - t->from;
  e.lit(",\"ts\":");
  t->size = uint32_t(e.p - t->text);
  t->tid = tid;
}

inline const ChromeSink::Head &ChromeSink::eventHead(bool wait, FinalState s) {
  Head &h = (wait ? waitHeads_ : stateHeads_)[size_t(s)];
  if (__builtin_expect(h.size == 0, 0)) makeHead(&h, wait, s);
  return h;
}

void ChromeSink::makeHead(Head *h, bool wait, FinalState s) {
  // '{"ph":"X","cat":"CAT","name":"LABEL","pid":PID,"tid":' by state, made
  // once: every state and wait event starts so.
  *h = padded(std::string("{\"ph\":\"X\",\"cat\":\"") + (wait ? "wait" : finalStateKey(s)) +
              "\",\"name\":\"" + finalStateLabel(s) + "\",\"pid\":" + std::to_string(pid()) +
              ",\"tid\":");
}

const ChromeSink::Head &ChromeSink::counterHead(bool cpu, int which) {
  // '{"ph":"C","name":NAME,"pid":PID,"ts":'
  std::vector<Head> &heads = cpu ? cpuHeads_ : counterHeads_;
  if (size_t(which) >= heads.size()) heads.resize(size_t(which) + 1);
  Head &h = heads[size_t(which)];
  if (h.text.empty()) {
    const QByteArray name = cpu ? "\"CPU " + QByteArray::number(which) + " busy %\""
                                : quoted(QLatin1String(counterName(which)));
    h = padded("{\"ph\":\"C\",\"name\":" + name.toStdString() +
               ",\"pid\":" + std::to_string(pid()) + ",\"ts\":");
  }
  return h;
}

const std::string &ChromeSink::quotedOnce(const QString &s) {
  auto it = quoted_.find(s);
  if (it == quoted_.end()) it = quoted_.insert(s, quoted(s).toStdString());
  return *it;
}

inline const ChromeSink::ArgsText &ChromeSink::stateArgs(int cpu, uint32_t object) {
  const uint64_t key = uint64_t(uint32_t(cpu)) << 32 | object;
  ArgsText &a = argsTexts_[(uint32_t(key ^ (key >> 29)) * 2654435761u) >> 24];  // 256 entries
  if (a.key != key || !a.size) {
    Text e{a.text};
    e.lit(",\"args\":{");
    if (cpu >= 0) e.lit("\"cpu\":"), e.num(cpu);
    if (object) {
      if (cpu >= 0) *e.p++ = ',';
      e.lit("\"object_id\":");
      e.num(object);
    }
    e.lit("}}");
    a.size = uint32_t(e.p - a.text);
    a.key = key;
  }
  return a;
}

inline void ChromeSink::nextFlowId() {
  char &last = flowId_[flowIdSize_ - 1];
  if (__builtin_expect(last != '9', 1)) {
    ++last;
    return;
  }
  carryFlowId();
}

void ChromeSink::carryFlowId() {
  for (char *d = flowId_ + flowIdSize_;;) {
    if (d == flowId_) {  // 9...9 + 1: a digit more
      std::memmove(flowId_ + 1, flowId_, flowIdSize_++);
      flowId_[0] = '1';
      return;
    }
    if (*--d != '9') {
      ++*d;
      return;
    }
    *d = '0';
  }
}

inline const ChromeSink::QuotedObject &ChromeSink::quotedNames(const ExportObject &o) {
  if (__builtin_expect(o.index < quotedObjects_.size() && quotedObjects_[o.index].made, 1))
    return quotedObjects_[o.index];
  return makeQuotedNames(o);
}

const ChromeSink::QuotedObject &ChromeSink::makeQuotedNames(const ExportObject &o) {
  if (o.index >= quotedObjects_.size()) quotedObjects_.resize(o.index + 1);
  QuotedObject &q = quotedObjects_[o.index];
  if (!q.made) {
    q.made = true;
    std::string args = ",\"args\":{\"object\":" + quoted(o.name).toStdString();
    if (!o.callSite.isEmpty()) args += ",\"call_site\":" + quoted(o.callSite).toStdString();
    q.args = padded(std::move(args));
  }
  return q;
}

void ChromeSink::event(const QByteArray &json) {
  event(json.constData(), json.size());
}

void ChromeSink::event(const char *json, qsizetype n) {
  char *p = begin(size_t(n));
  if (n > 0) std::memcpy(p, json, size_t(n));
  out_->commit(p + n);
}

void ChromeSink::process(const SessionInfo &info, int) {
  const QByteArray pid = QByteArray::number(info.pid);
  QString name = QFileInfo(info.exe).fileName();
  if (name.isEmpty()) name = QStringLiteral("process %1").arg(info.pid);
  event("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid + ",\"args\":{\"name\":" +
        quoted(name) + "}}");
  event("{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":" + pid + ",\"args\":{\"labels\":" +
        quoted(info.argv.join(u' ')) + "}}");
}

void ChromeSink::thread(const ExportThread &t) {
  const QByteArray head = "{\"ph\":\"M\",\"pid\":" + QByteArray::number(pid()) + ",\"tid\":";
  QString name = t.name + (t.probe ? QStringLiteral(" [probe]") : QString());
  event(head + QByteArray::number(t.tid) + ",\"name\":\"thread_name\",\"args\":{\"name\":" +
        quoted(name) + "}}");
  // Its waits on a track of their own, sorted right under it.
  event(head + QByteArray::number(waitTrack(t.tid)) +
        ",\"name\":\"thread_name\",\"args\":{\"name\":" + quoted(name + QStringLiteral(" waits")) +
        "}}");
  event(head + QByteArray::number(t.tid) + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" +
        QByteArray::number(qlonglong(t.tid) * 2) + "}}");
  event(head + QByteArray::number(waitTrack(t.tid)) +
        ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" +
        QByteArray::number(qlonglong(t.tid) * 2 + 1) + "}}");
}

[[gnu::always_inline]] inline char *ChromeSink::stateEvent(char *at, const StateInterval &iv) {
  // The category is the state's key (on_cpu, blocked_mutex, ...): a filter.
  const StatePrefix &prefix = statePrefixes_[size_t(iv.state)];
  Text e{at};
  if (__builtin_expect(prefix.size <= kPrefixRoom, 1))
    std::memcpy(e.p, prefix.text.data(), kPrefixRoom);
  else
    std::memcpy(e.p, prefix.text.data(), prefix.size);
  e.p += prefix.size;
  e.ts(iv.start - origin(), &tens_);
  e.lit(",\"dur\":");
  e.ts(iv.end - iv.start, &tens_);
  if (iv.cpu >= 0 || iv.object) {
    const ArgsText &args = stateArgs(iv.cpu, iv.object);
    std::memcpy(e.p, args.text, sizeof args.text);
    e.p += args.size;
  } else {
    *e.p++ = '}';
  }
  return e.p;
}

void ChromeSink::state(uint32_t tid, const StateInterval &iv) {
  states(tid, &iv, 1);
}

// Each state's head and the thread's tid, joined once for its events.
void ChromeSink::makeStatePrefixes(uint32_t tid) {
  const TidText &t = tidText(tid);
  for (size_t s = 0; s < statePrefixes_.size(); s++) {
    const Head &head = eventHead(false, FinalState(s));
    StatePrefix &prefix = statePrefixes_[s];
    prefix.text.assign(head.text.data(), head.size);
    prefix.text.append(t.text + t.from, t.size - t.from);
    prefix.size = prefix.text.size();
    prefix.text.resize(std::max(prefix.size, kPrefixRoom));
  }
  prefixTid_ = tid;
  prefixesMade_ = true;
}

void ChromeSink::states(uint32_t tid, const StateInterval *runs, size_t n) {
  if (tid != prefixTid_ || !prefixesMade_) makeStatePrefixes(tid);
  // Up to 32 events in one piece of the output: one reserve and commit
  // each, not one an event.
  constexpr size_t kBatch = 32;
  for (size_t i = 0; i < n;) {
    const size_t end = std::min(n, i + kBatch);
    char *p = stateEvent(begin((end - i) * (kEventRoom + 2)), runs[i]);
    while (++i < end) {
      std::memcpy(p, ",\n", 2);
      p = stateEvent(p + 2, runs[i]);
    }
    out_->commit(p);
  }
}

void ChromeSink::wait(const ExportWait &w) {
  const Head &head = eventHead(true, w.state);
  const QuotedObject &names = quotedNames(*w.object);
  // The waiter's and releaser's texts are written twice each: copied out
  // of the table once (a lookup of another tid may take their entry).
  const TidText waiter = tidText(waitTrack(w.waiter));
  // The wait and its flow's two ends in one piece of the output.
  Text e{begin(names.args.size + 3 * kEventRoom)};
  e.head(head.text, head.size);
  e.tidTs(waiter);
  e.ts(w.start - origin(), &tens_);
  e.lit(",\"dur\":");
  e.ts(w.end - w.start, &tens_);
  e.head(names.args.text, names.args.size);
  if (w.holder) e.lit(",\"holder_tid\":"), e.tid(tidText(w.holder));
  if (!w.releaser || w.open || w.releaser == w.waiter) {
    if (w.releaser) e.lit(",\"released_by_tid\":"), e.tid(tidText(w.releaser));
    if (w.open) e.lit(",\"open\":true");
    e.lit("}}");
    out_->commit(e.p);
    return;
  }
  const TidText releaser = tidText(w.releaser);
  e.lit(",\"released_by_tid\":");
  e.tid(releaser);
  e.lit("}}");
  // Who released it: from the releaser's state at the wait's end to the wait.
  // Both ends have the same id and time: formatted once, copied (32 bytes
  // whatever their length, within the event's room).
  e.lit(",\n{\"ph\":\"s\",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":");
  nextFlowId();
  char *const id = e.p;
  std::memcpy(e.p, flowId_, sizeof flowId_);
  e.p += flowIdSize_;
  const size_t idSize = flowIdSize_;
  e.pidTidTs(releaser);
  char *const ts = e.p;
  e.ts(w.end - 1 - origin(), &tens_);
  *e.p++ = '}';
  const size_t tsSize = size_t(e.p - ts);
  e.lit(",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":");
  std::memcpy(e.p, id, 32);
  e.p += idSize;
  e.pidTidTs(waiter);
  std::memcpy(e.p, ts, 32);
  e.p += tsSize;
  out_->commit(e.p);
}

void ChromeSink::userSpan(uint32_t tid, const QString &userThread, int64_t start, int64_t end) {
  // On the LWP's waits track: a user thread runs there between its LWP's waits.
  const std::string &name = quotedOnce(userThread);
  Text e{begin(name.size() + kEventRoom)};
  e.lit("{\"ph\":\"X\",\"cat\":\"user_thread\",\"name\":");
  e.str(name);
  e.lit(",\"pid\":");
  e.num(pid());
  e.lit(",\"tid\":");
  e.num(userTrack(tid));
  e.lit(",\"ts\":");
  e.ts(start - origin(), &tens_);
  e.lit(",\"dur\":");
  e.ts(end - start, &tens_);
  *e.p++ = '}';
  out_->commit(e.p);
  if (userTracks_.contains(tid)) return;
  userTracks_.insert(tid);
  event("{\"ph\":\"M\",\"pid\":" + QByteArray::number(pid()) + ",\"tid\":" +
        QByteArray::number(userTrack(tid)) + ",\"name\":\"thread_name\",\"args\":{\"name\":\"LWP " +
        QByteArray::number(tid) + " user threads\"}}");
}

void ChromeSink::counterEvent(const Head &head, int64_t t, const char *arg, size_t argSize,
                              double v) {
  Text e{begin(kEventRoom)};
  e.head(head.text, head.size);
  e.ts(t - origin(), &tens_);
  std::memcpy(e.p, arg, argSize);
  e.p += argSize;
  // As QByteArray::number(v, 'g', 12) wrote it: 12 significant digits.
  e.p = std::to_chars(e.p, e.p + 40, v, std::chars_format::general, 12).ptr;
  e.lit("}}");
  out_->commit(e.p);
}

void ChromeSink::cpuBusy(int cpu, int64_t t, double percent) {
  static const char arg[] = ",\"args\":{\"busy\":";
  counterEvent(counterHead(true, cpu), t, arg, sizeof arg - 1, percent);
}

void ChromeSink::counter(int which, int64_t t, double value) {
  static const char arg[] = ",\"args\":{\"value\":";
  counterEvent(counterHead(false, which), t, arg, sizeof arg - 1, value);
}

bool ChromeSink::finish(QString *error) {
  if (!opened_) event(QByteArray());  // an empty capture: still a whole document
  out_->write(QByteArrayLiteral("\n]}\n"));
  if (!out_->close()) {
    *error = out_->error();
    return false;
  }
  return true;
}

}  // namespace tmon
