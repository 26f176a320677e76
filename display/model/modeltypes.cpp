#include "modeltypes.h"

#include <algorithm>

#include "threadmon.pb-c.h"

namespace tmon {

const char *finalStateKey(FinalState s) {
  static const char *const keys[kFinalStateCount] = {
      "on_cpu",          "runnable",    "blocked_mutex", "blocked_cond",
      "blocked_rwlock",  "blocked_barrier", "blocked_sem", "blocked_spin",
      "blocked_join",    "sleeping",    "io_wait",       "stopped",
      "stolen"};
  int i = int(s);
  return i >= 0 && i < kFinalStateCount ? keys[i] : "unknown";
}

bool isBlockedState(FinalState s) {
  return s >= FinalState::BlockedMutex && s <= FinalState::BlockedJoin;
}

bool blockedStateOfKind(int syncKind, FinalState *out) {
  switch (syncKind) {
    case THREADMON__SYNC_KIND__KIND_MUTEX: *out = FinalState::BlockedMutex; return true;
    case THREADMON__SYNC_KIND__KIND_COND: *out = FinalState::BlockedCond; return true;
    case THREADMON__SYNC_KIND__KIND_RWLOCK: *out = FinalState::BlockedRwlock; return true;
    case THREADMON__SYNC_KIND__KIND_BARRIER: *out = FinalState::BlockedBarrier; return true;
    case THREADMON__SYNC_KIND__KIND_SPIN: *out = FinalState::BlockedSpin; return true;
    case THREADMON__SYNC_KIND__KIND_SEM: *out = FinalState::BlockedSem; return true;
    default: return false;
  }
}

QString syncKindName(int kind) {
  static const char *const names[] = {"unknown", "mutex", "cond", "rwlock",
                                      "barrier", "spin",  "sem",  "internal"};
  if (kind < 0 || kind >= int(sizeof names / sizeof names[0])) return QStringLiteral("unknown");
  return QString::fromLatin1(names[kind]);
}

QString sourceName(int source) {
  static const char *const names[] = {"unspecified",   "interpose",     "proc_task",
                                      "proc_stat",     "perf_switch",   "perf_software",
                                      "perf_hardware", "unwind",        "futex_sampling"};
  if (source < 0 || source >= int(sizeof names / sizeof names[0]))
    return QStringLiteral("source_%1").arg(source);
  return QString::fromLatin1(names[source]);
}

bool SessionInfo::hasSource(int source) const {
  return std::find(sources.begin(), sources.end(), source) != sources.end();
}

QString SyncObjectInfo::symbolText() const {
  if (symbol.isEmpty()) return QString();
  QString s = symbol;
  if (symbolOffset) s += QStringLiteral("+0x%1").arg(symbolOffset, 0, 16);
  if (!symbolFile.isEmpty()) s += QStringLiteral(" (%1)").arg(symbolFile);
  return s;
}

QString SyncObjectInfo::callSite() const {
  return firstContentionStack.isEmpty() ? QString() : firstContentionStack.first();
}

}  // namespace tmon
