// ReportRows: every number threadmon-report prints, gathered before it is
// formatted, so that one model read whole (collectRows) and a long capture
// read a window at a time (StreamedReport, reportstream.h) give the report
// the same rows.
#ifndef THREADMON_REPORTROWS_H
#define THREADMON_REPORTROWS_H

#include <QString>
#include <QStringList>

#include <cstdint>
#include <utility>
#include <vector>

#include "findings.h"
#include "modeltypes.h"

namespace tmon {
class SessionModel;
}

struct ThreadRow {
  tmon::ThreadInfo info;
  bool probe = false;
  tmon::StateTimes states;  // attributed (SessionModel::threadStatesAttributed)
  tmon::LwpDelta lwp;
  std::vector<int64_t> cpuNs;  // on-CPU ns per CPU index
  bool folded = false;         // its ring folded changes (ThreadInfo::folds)
  double foldedNs = 0;         // the thread time its gaps held
};

struct UserThreadRow {
  tmon::UserThreadInfo info;
  tmon::UserThreadStates states;
};

struct SyncRow {
  tmon::SyncObjectInfo info;
  tmon::SyncDelta delta;
  bool housekeeping = false;  // only a runtime's own threads waited on it
  std::vector<tmon::CallSite> sites;
  std::vector<tmon::InternalWaiter> internal;           // KIND_INTERNAL: estimated
  std::vector<std::pair<uint32_t, int64_t>> waiters;    // others: wait by tid, most first
  std::vector<tmon::WaitPair> blockedBy;
  QString callSite;  // SessionModel::objectCallSite
};

struct ReportRows {
  tmon::SessionInfo info;
  int64_t startNs = 0;
  double durationS = 0;
  bool jvm = false;  // threads of a JVM seen (runtime notes)
  bool go = false;   // the Go runtime's futexes seen
  std::vector<ThreadRow> threads;  // by first sight
  std::vector<UserThreadRow> users;
  std::vector<tmon::CpuDelta> cpus;
  std::vector<SyncRow> sync;  // active ones, most waiting first (syncObjectsByWait)
  std::vector<tmon::WaitPair> waitMatrix;
  std::vector<tmon::Finding> findings;
  // What the numbers say that cannot be (modelinvariants.h), one line each.
  QStringList violations;
};

// The rows of the whole run of a model read whole.
ReportRows collectRows(const tmon::SessionModel &m);

// Pieces both collectRows and the streamed report use.
bool isJvmSession(const tmon::SessionModel &m);
bool isGoSession(const tmon::SessionModel &m);
// Objects with activity first, as SessionModel::syncObjectsByWait orders them.
void sortSyncRows(std::vector<SyncRow> *rows);
// A waiter's total per tid, most first (ties: smaller tid first).
std::vector<std::pair<uint32_t, int64_t>> waitersByTime(
    const std::vector<std::pair<uint32_t, int64_t>> &sums);

#endif
