#include "chromeexport.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

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

// Integers and times appended in place: the states and waits are millions
// of events, and building each from temporary strings was most of the CPU.
static void appendInt(std::string *b, int64_t v) {
  char tmp[24];
  char *at = tmp + sizeof tmp;
  const bool neg = v < 0;
  uint64_t u = neg ? uint64_t(-(v + 1)) + 1 : uint64_t(v);
  do {
    *--at = char('0' + u % 10);
    u /= 10;
  } while (u);
  if (neg) *--at = '-';
  b->append(at, size_t(tmp + sizeof tmp - at));
}

void ChromeSink::appendTs(std::string *b, int64_t ns) const {
  // Microseconds with three decimals: nanoseconds, exactly.
  if (ns < 0) {
    *b += '-';
    ns = -ns;
  }
  appendInt(b, ns / 1000);
  const int rest = int(ns % 1000);
  if (!rest) return;
  const char decimals[4] = {'.', char('0' + rest / 100), char('0' + rest / 10 % 10),
                            char('0' + rest % 10)};
  b->append(decimals, 4);
}

QByteArray ChromeSink::ts(int64_t t) const {
  std::string b;
  appendTs(&b, t - origin());
  return QByteArray::fromStdString(b);
}

const std::string &ChromeSink::quotedOnce(const QString &s) {
  auto it = quoted_.find(s);
  if (it == quoted_.end()) it = quoted_.insert(s, quoted(s).toStdString());
  return *it;
}

const ChromeSink::QuotedObject &ChromeSink::quotedNames(const ExportWait &w) {
  QuotedObject &q = quotedObjects_[w.objectId];
  if (!q.made || q.object != w.object || q.callSite != w.callSite) {
    q.made = true;
    q.object = w.object;
    q.callSite = w.callSite;
    q.objectJson = quoted(w.object).toStdString();
    q.callSiteJson = quoted(w.callSite).toStdString();
  }
  return q;
}

void ChromeSink::event(const std::string &json) {
  event(json.data(), qsizetype(json.size()));
}

void ChromeSink::event(const QByteArray &json) {
  event(json.constData(), json.size());
}

void ChromeSink::event(const char *json, qsizetype n) {
  if (!opened_) {
    opened_ = true;
    out_->write(QByteArrayLiteral("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"));
  }
  if (any_) out_->write(",\n", 2);
  any_ = true;
  out_->write(json, n);
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
  std::string &e = line_;
  e.clear();  // keeps its capacity
  e.append("{\"ph\":\"X\",\"cat\":\"").append(finalStateKey(iv.state)).append("\",\"name\":\"");
  e.append(finalStateLabel(iv.state)).append("\",\"pid\":");
  appendInt(&e, pid());
  e.append(",\"tid\":");
  appendInt(&e, tid);
  e.append(",\"ts\":");
  appendTs(&e, iv.start - origin());
  e.append(",\"dur\":");
  appendTs(&e, iv.end - iv.start);
  if (iv.cpu >= 0 || iv.object) {
    e.append(",\"args\":{");
    if (iv.cpu >= 0) e.append("\"cpu\":"), appendInt(&e, iv.cpu);
    if (iv.object) e.append(iv.cpu >= 0 ? ",\"object_id\":" : "\"object_id\":"), appendInt(&e, iv.object);
    e += '}';
  }
  e += '}';
  event(e);
}

void ChromeSink::wait(const ExportWait &w) {
  std::string &e = line_;
  e.clear();
  e.append("{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"").append(finalStateLabel(w.state));
  e.append("\",\"pid\":");
  appendInt(&e, pid());
  e.append(",\"tid\":");
  appendInt(&e, waitTrack(w.waiter));
  e.append(",\"ts\":");
  appendTs(&e, w.start - origin());
  e.append(",\"dur\":");
  appendTs(&e, w.end - w.start);
  const QuotedObject &names = quotedNames(w);
  e.append(",\"args\":{\"object\":").append(names.objectJson);
  if (!w.callSite.isEmpty()) e.append(",\"call_site\":").append(names.callSiteJson);
  if (w.holder) e.append(",\"holder_tid\":"), appendInt(&e, w.holder);
  if (w.releaser) e.append(",\"released_by_tid\":"), appendInt(&e, w.releaser);
  if (w.open) e.append(",\"open\":true");
  e.append("}}");
  event(e);
  if (!w.releaser || w.open || w.releaser == w.waiter) return;
  // Who released it: from the releaser's state at the wait's end to the wait.
  const uint64_t id = ++flows_;
  for (int end = 0; end < 2; end++) {
    e.clear();
    e.append(end ? "{\"ph\":\"f\",\"bp\":\"e\"" : "{\"ph\":\"s\"");
    e.append(",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":");
    appendInt(&e, int64_t(id));
    e.append(",\"pid\":");
    appendInt(&e, pid());
    e.append(",\"tid\":");
    appendInt(&e, end ? waitTrack(w.waiter) : w.releaser);
    e.append(",\"ts\":");
    appendTs(&e, w.end - 1 - origin());
    e += '}';
    event(e);
  }
}

void ChromeSink::userSpan(uint32_t tid, const QString &userThread, int64_t start, int64_t end) {
  // On the LWP's waits track: a user thread runs there between its LWP's waits.
  std::string &e = line_;
  e.clear();
  e.append("{\"ph\":\"X\",\"cat\":\"user_thread\",\"name\":").append(quotedOnce(userThread));
  e.append(",\"pid\":");
  appendInt(&e, pid());
  e.append(",\"tid\":");
  appendInt(&e, userTrack(tid));
  e.append(",\"ts\":");
  appendTs(&e, start - origin());
  e.append(",\"dur\":");
  appendTs(&e, end - start);
  e += '}';
  event(e);
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
