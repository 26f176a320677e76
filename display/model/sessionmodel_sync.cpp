// SessionModel queries about who waited for whom: waits, the waiter x
// holder matrix, call sites, hidden-lock waiters, deadlocks and findings.
#include <QFileInfo>

#include <algorithm>

#include "sessionmodel.h"
#include "sessionstore.h"

namespace tmon {

namespace {
constexpr uint64_t kDefaultTickNs = 10'000'000;  // the probe's default, when Hello lacks it
}

std::vector<WaitRecord> SessionModel::waits(uint32_t objectId, const TimeRange &r) const {
  std::vector<WaitRecord> out;
  store_->activity.waits(objectId, r, latestNs(), &out);
  return out;
}

std::vector<WaitPair> SessionModel::waitMatrix(const TimeRange &r, uint32_t objectId) const {
  return store_->activity.matrix(r, latestNs(), objectId);
}

QStringList SessionModel::stack(uint32_t stackId) const {
  return store_->activity.stackFrames(stackId);
}

std::vector<CallSite> SessionModel::callSites(uint32_t objectId, const TimeRange &r) const {
  return store_->activity.callSites(objectId, r);
}

std::vector<InternalWaiter> SessionModel::internalWaiters(uint32_t objectId,
                                                          const TimeRange &r) const {
  std::vector<InternalWaiter> out;
  int idx = indexOfSyncObject(objectId);
  if (idx < 0 || !syncObject(idx).address) return out;
  uint64_t addr = syncObject(idx).address;
  uint64_t tick = info().tickIntervalNs ? info().tickIntervalNs : kDefaultTickNs;
  for (uint32_t tid : store_->activity.futexThreads(addr)) {
    int ti = indexOfTid(tid);
    int64_t end = ti >= 0 ? thread(ti).endNs : -1;
    uint64_t n = store_->activity.futexTicks(tid, addr, r, store_->tickTimes, end);
    if (n) out.push_back(InternalWaiter{tid, n, n * tick});
  }
  std::stable_sort(out.begin(), out.end(), [](const InternalWaiter &a, const InternalWaiter &b) {
    return a.samples > b.samples;
  });
  return out;
}

uint64_t SessionModel::internalWaitNs(int index, const TimeRange &r) const {
  uint64_t tick = info().tickIntervalNs ? info().tickIntervalNs : kDefaultTickNs;
  const ThreadInfo &t = thread(index);
  uint64_t n = 0;
  for (int i = 0; i < syncObjectCount(); i++) {
    const SyncObjectInfo &o = syncObject(i);
    if (o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL && o.address)
      n += store_->activity.futexTicks(t.tid, o.address, r, store_->tickTimes, t.endNs);
  }
  return n * tick;
}

size_t SessionModel::lwpSampleCount(int index) const {
  return store_->threads[size_t(index)]->lwp.size();
}

int64_t SessionModel::chosenSleepNs(int index, const TimeRange &r) const {
  return store_->activity.sleepNs(thread(index).tid, r, latestNs());
}

QString SessionModel::programFrame(const QStringList &frames) const {
  // "module!function+0xoff (file:line)" -> "module!function".
  auto shortFrame = [](QString f) {
    int sp = f.indexOf(QLatin1String(" ("));
    if (sp >= 0) f.truncate(sp);
    int plus = f.lastIndexOf(QLatin1String("+0x"));
    if (plus > f.indexOf('!')) f.truncate(plus);
    return f;
  };
  QString exe = QFileInfo(info().exe).fileName();
  for (const QString &f : frames) {
    QString module = QFileInfo(f.section('!', 0, 0)).fileName();
    if (!exe.isEmpty() && module == exe) return shortFrame(f);
  }
  return frames.isEmpty() ? QString() : shortFrame(frames.first());
}

std::vector<Deadlock> SessionModel::liveDeadlocks() const {
  std::vector<Deadlock> out;
  for (const Deadlock &d : store_->activity.deadlocks())
    if (d.live()) out.push_back(d);
  return out;
}

std::vector<Deadlock> SessionModel::deadlocks() const { return store_->activity.deadlocks(); }

std::vector<Finding> SessionModel::findings(const TimeRange &r) const {
  return computeFindings(*this, r);
}

}  // namespace tmon
