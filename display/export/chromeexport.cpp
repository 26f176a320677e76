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

QByteArray ChromeSink::ts(int64_t t) const {
  // Microseconds with three decimals: nanoseconds, exactly.
  const int64_t ns = t - origin();
  const int64_t us = ns / 1000, rest = ns % 1000;
  QByteArray s = QByteArray::number(qlonglong(us));
  if (rest) s += '.' + QByteArray::number(qlonglong(rest < 0 ? -rest : rest)).rightJustified(3, '0');
  if (ns < 0 && us == 0) s.prepend('-');
  return s;
}

void ChromeSink::event(const QByteArray &json) {
  if (!opened_) {
    opened_ = true;
    out_->write(QByteArrayLiteral("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"));
  }
  if (any_) out_->write(",\n", 2);
  any_ = true;
  out_->write(json);
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
  QByteArray e = "{\"ph\":\"X\",\"cat\":\"" + QByteArray(finalStateKey(iv.state)) + "\",\"name\":" +
                 quoted(QLatin1String(finalStateLabel(iv.state))) +
                 ",\"pid\":" + QByteArray::number(pid()) + ",\"tid\":" + QByteArray::number(tid) +
                 ",\"ts\":" + ts(iv.start) + ",\"dur\":" + ts(origin() + (iv.end - iv.start));
  QByteArray args;
  if (iv.cpu >= 0) args += "\"cpu\":" + QByteArray::number(iv.cpu);
  if (iv.object) args += (args.isEmpty() ? "" : ",") + QByteArray("\"object_id\":") + QByteArray::number(iv.object);
  if (!args.isEmpty()) e += ",\"args\":{" + args + "}";
  event(e + "}");
}

void ChromeSink::wait(const ExportWait &w) {
  const QByteArray pidText = QByteArray::number(pid());
  QByteArray args = "\"object\":" + quoted(w.object);
  if (!w.callSite.isEmpty()) args += ",\"call_site\":" + quoted(w.callSite);
  if (w.holder) args += ",\"holder_tid\":" + QByteArray::number(w.holder);
  if (w.releaser) args += ",\"released_by_tid\":" + QByteArray::number(w.releaser);
  if (w.open) args += ",\"open\":true";
  event("{\"ph\":\"X\",\"cat\":\"wait\",\"name\":" + quoted(QLatin1String(finalStateLabel(w.state))) +
        ",\"pid\":" + pidText + ",\"tid\":" + QByteArray::number(waitTrack(w.waiter)) +
        ",\"ts\":" + ts(w.start) + ",\"dur\":" + ts(origin() + (w.end - w.start)) + ",\"args\":{" +
        args + "}}");
  if (!w.releaser || w.open || w.releaser == w.waiter) return;
  // Who released it: from the releaser's state at the wait's end to the wait.
  const QByteArray id = QByteArray::number(qulonglong(++flows_));
  event("{\"ph\":\"s\",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":" + id + ",\"pid\":" +
        pidText + ",\"tid\":" + QByteArray::number(w.releaser) + ",\"ts\":" + ts(w.end - 1) + "}");
  event("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":" + id +
        ",\"pid\":" + pidText + ",\"tid\":" + QByteArray::number(waitTrack(w.waiter)) +
        ",\"ts\":" + ts(w.end - 1) + "}");
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
