#include "chromeexport.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <charconv>
#include <cstring>

#include "exportoutput.h"

namespace tmon {

namespace {
QByteArray quoted(const QString &s) {
  // A JSON string, escaped as QJsonDocument escapes it.
  QByteArray doc = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
  return doc.mid(1, doc.size() - 2);
}
QByteArray num(double v) { return QByteArray::number(v, 'g', 12); }
}  // namespace

// Events are written straight into the output's buffer (ExportOutput::
// reserve): the states and waits are millions of events, and building each
// in a string of its own and appending it was most of the CPU.
namespace {
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
  void num(int64_t v) { p = std::to_chars(p, p + 20, v).ptr; }
  // Microseconds with three decimals: nanoseconds, exactly.
  void ts(int64_t ns) {
    if (ns < 0) {
      *p++ = '-';
      ns = -ns;
    }
    num(ns / 1000);
    const int rest = int(ns % 1000);
    if (!rest) return;
    p[0] = '.';
    p[1] = char('0' + rest / 100);
    p[2] = char('0' + rest / 10 % 10);
    p[3] = char('0' + rest % 10);
    p += 4;
  }
};
// Room for an event's numbers and fixed words; names are added to it.
constexpr size_t kEventRoom = 320;
}  // namespace

char *ChromeSink::begin(size_t n) {
  char *p = out_->reserve(n + 64);
  if (!opened_) {
    opened_ = true;
    static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    std::memcpy(p, head, sizeof head - 1);
    p += sizeof head - 1;
  }
  if (any_) *p++ = ',', *p++ = '\n';
  any_ = true;
  return p;
}

const std::string &ChromeSink::eventHead(const char *cat, FinalState s) {
  // '{"ph":"X","cat":"CAT","name":"LABEL","pid":PID,"tid":' by state, made
  // once: every state and wait event starts so.
  std::string &h = (cat ? waitHeads_ : stateHeads_)[size_t(s)];
  if (h.empty()) {
    h = std::string("{\"ph\":\"X\",\"cat\":\"") + (cat ? cat : finalStateKey(s)) +
        "\",\"name\":\"" + finalStateLabel(s) + "\",\"pid\":" + std::to_string(pid()) + ",\"tid\":";
  }
  return h;
}

QByteArray ChromeSink::ts(int64_t t) const {
  char b[32];
  Text e{b};
  e.ts(t - origin());
  return QByteArray(b, e.p - b);
}

const std::string &ChromeSink::quotedOnce(const QString &s) {
  auto it = quoted_.find(s);
  if (it == quoted_.end()) it = quoted_.insert(s, quoted(s).toStdString());
  return *it;
}

const ChromeSink::QuotedObject &ChromeSink::quotedNames(const ExportObject &o) {
  if (o.index >= quotedObjects_.size()) quotedObjects_.resize(o.index + 1);
  QuotedObject &q = quotedObjects_[o.index];
  if (!q.made) {
    q.made = true;
    q.objectJson = quoted(o.name).toStdString();
    q.callSiteJson = quoted(o.callSite).toStdString();
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

void ChromeSink::state(uint32_t tid, const StateInterval &iv) {
  // The category is the state's key (on_cpu, blocked_mutex, ...): a filter.
  const std::string &head = eventHead(nullptr, iv.state);
  Text e{begin(head.size() + kEventRoom)};
  e.str(head);
  e.num(tid);
  e.lit(",\"ts\":");
  e.ts(iv.start - origin());
  e.lit(",\"dur\":");
  e.ts(iv.end - iv.start);
  if (iv.cpu >= 0 || iv.object) {
    e.lit(",\"args\":{");
    if (iv.cpu >= 0) e.lit("\"cpu\":"), e.num(iv.cpu);
    if (iv.object) {
      if (iv.cpu >= 0) *e.p++ = ',';
      e.lit("\"object_id\":");
      e.num(iv.object);
    }
    *e.p++ = '}';
  }
  *e.p++ = '}';
  out_->commit(e.p);
}

void ChromeSink::wait(const ExportWait &w) {
  const std::string &head = eventHead("wait", w.state);
  const QuotedObject &names = quotedNames(*w.object);
  Text e{begin(head.size() + names.objectJson.size() + names.callSiteJson.size() + kEventRoom)};
  e.str(head);
  e.num(waitTrack(w.waiter));
  e.lit(",\"ts\":");
  e.ts(w.start - origin());
  e.lit(",\"dur\":");
  e.ts(w.end - w.start);
  e.lit(",\"args\":{\"object\":");
  e.str(names.objectJson);
  if (!w.object->callSite.isEmpty()) e.lit(",\"call_site\":"), e.str(names.callSiteJson);
  if (w.holder) e.lit(",\"holder_tid\":"), e.num(w.holder);
  if (w.releaser) e.lit(",\"released_by_tid\":"), e.num(w.releaser);
  if (w.open) e.lit(",\"open\":true");
  e.lit("}}");
  out_->commit(e.p);
  if (!w.releaser || w.open || w.releaser == w.waiter) return;
  // Who released it: from the releaser's state at the wait's end to the wait.
  const uint64_t id = ++flows_;
  for (int end = 0; end < 2; end++) {
    Text f{begin(kEventRoom)};
    if (end)
      f.lit("{\"ph\":\"f\",\"bp\":\"e\"");
    else
      f.lit("{\"ph\":\"s\"");
    f.lit(",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":");
    f.num(int64_t(id));
    f.lit(",\"pid\":");
    f.num(pid());
    f.lit(",\"tid\":");
    f.num(end ? waitTrack(w.waiter) : w.releaser);
    f.lit(",\"ts\":");
    f.ts(w.end - 1 - origin());
    *f.p++ = '}';
    out_->commit(f.p);
  }
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
  e.ts(start - origin());
  e.lit(",\"dur\":");
  e.ts(end - start);
  *e.p++ = '}';
  out_->commit(e.p);
  if (userTracks_.contains(tid)) return;
  userTracks_.insert(tid);
  event("{\"ph\":\"M\",\"pid\":" + QByteArray::number(pid()) + ",\"tid\":" +
        QByteArray::number(userTrack(tid)) + ",\"name\":\"thread_name\",\"args\":{\"name\":\"LWP " +
        QByteArray::number(tid) + " user threads\"}}");
}

void ChromeSink::cpuBusy(int cpu, int64_t t, double percent) {
  event("{\"ph\":\"C\",\"name\":\"CPU " + QByteArray::number(cpu) + " busy %\",\"pid\":" +
        QByteArray::number(pid()) + ",\"ts\":" + ts(t) + ",\"args\":{\"busy\":" + num(percent) +
        "}}");
}

void ChromeSink::counter(int which, int64_t t, double value) {
  event("{\"ph\":\"C\",\"name\":" + quoted(QLatin1String(counterName(which))) + ",\"pid\":" +
        QByteArray::number(pid()) + ",\"ts\":" + ts(t) + ",\"args\":{\"value\":" + num(value) +
        "}}");
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
