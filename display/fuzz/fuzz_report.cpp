// libFuzzer target: a stream into the model, then everything threadmon-report
// prints (the JSON and the text, with every finding) and what the views ask
// about a window in the middle of the run. Any crash, sanitizer report,
// timeout or leak is a reader that does not survive its input.
#include <QJsonDocument>

#include <algorithm>

#include "fuzzsession.h"
#include "reportjson.h"
#include "reporttext.h"
#include "sessionmodel.h"

using namespace tmon;

namespace {

// At most this many threads, CPUs and objects are asked about one by one:
// enough to reach every path, and executions stay fast.
constexpr int kEach = 16;

void askLikeTheViews(const SessionModel &m, const TimeRange &r) {
  for (int i = 0; i < std::min(kEach, m.threadCount()); i++) {
    m.intervals(i, r);
    StateInterval s;
    m.stateAt(i, r.t0 + r.length() / 2, &s);
    m.asleepTicksByKind(i, r);
    m.internalWaitNs(i, r);
  }
  for (int c = 0; c < std::min(kEach, m.cpuCount()); c++) m.cpuThreads(c, r);
  for (int o = 0; o < std::min(kEach, m.syncObjectCount()); o++) {
    m.blockedOn(m.syncObject(o).id, r);
    m.objectCallSite(o, r);
  }
  m.ticks(r);
  m.liveDeadlocks();
  m.findings(r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SessionModel model;
  if (!tmfuzz::feed(&model, data, size)) return 0;
  const QJsonObject report = reportJson(model);
  reportText(report);
  QJsonDocument(report).toJson();
  const TimeRange whole = model.resolve(Window::wholeRun());
  askLikeTheViews(model, TimeRange{whole.t0 + whole.length() / 3, whole.t1 - whole.length() / 3});
  return 0;
}
