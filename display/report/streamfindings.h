// Findings of a capture read a window at a time (StreamedReport). Every
// rule (computeFindings) runs on each window's model, which is a complete
// session over its span; the same finding from several windows (same rule,
// same subject: the merge of its kind in findings.def: the objects, the
// threads, or the program for scheduling) is merged into one: its severity
// the highest, its message and evidence the worst window's (a rule's shares
// hold together only within one window), and evidence.windows saying in how
// many windows it held, when the worst was, and the additive figures
// (waits, rounds) summed over those windows. Deadlocks (merge Cycle) are
// kept one per cycle; lost data (Newest) from the newest window (its
// counters are the run's so far), but data_lost, made once of the whole
// run's inputs. Only merged findings are held.
#ifndef THREADMON_STREAMFINDINGS_H
#define THREADMON_STREAMFINDINGS_H

#include <QString>
#include <map>
#include <set>
#include <vector>

#include "findings.h"
#include "findings_util.h"
#include "reportrows.h"

namespace tmon {
class SessionModel;
}

struct StreamFindingsPart {
  std::vector<tmon::Finding> findings;  // computeFindings over span
  tmon::TimeRange span;
  int64_t startNs = 0;  // the session's start
  tmon::FindingInputs inputs;  // what the rules read over span
  // The program's threads over span (findings_detail::programThreads): a
  // serialising object's share is of their lives in the whole run.
  std::vector<uint32_t> programTids;
  // data_lost's inputs over span, its threads with gaps those of the
  // windows before too (StreamFindings::gapped), named by this model.
  tmon::findings_detail::DataLostInputs dataLost;
};

// What a window's model says over span (known: computeFindings');
// gappedBefore: the threads with gaps in the windows before.
StreamFindingsPart streamFindingsPart(const tmon::SessionModel &m, const tmon::TimeRange &span,
                                      const tmon::KnownWaiterNs &known,
                                      const std::vector<uint32_t> &gappedBefore);

class StreamFindings {
 public:
  // fromDetail: the windows are a flight capture's kept detail, which the
  // figures of the "run" are.
  explicit StreamFindings(int64_t windowNs, bool fromDetail = false)
      : windowNs_(windowNs), fromDetail_(fromDetail) {}
  // blockedThrough: threads the merge carried blocked (in a sync call or a
  // join) over at least half the window, which the window's model alone
  // saw asleep: the window's never_runs is not theirs (the run's is made
  // of the rows, whose states hold the carried time blocked: it only keeps
  // evidence.windows.held from counting that window).
  void add(const StreamFindingsPart &p, const std::set<uint32_t> &blockedThrough);
  // The threads with a gap in their events in the windows added so far.
  const std::vector<uint32_t> &gapped() const { return dataLost_.gapped; }
  // The findings, most severe first; adds the notice saying how they were
  // found to rows.info.notices. names: a model that knows the program's
  // name (SessionModel::programFrame).
  std::vector<tmon::Finding> findings(ReportRows *rows, const tmon::SessionModel &names) const;

  // The notice of a streamed report's findings (windows of windowS).
  static QString notice(double windowS);
  static bool isNotice(const QString &notice);

 private:
  struct Merged {
    tmon::Finding worst;
    tmon::TimeRange worstSpan;
    int windows = 0;
    int64_t firstNs = 0, lastNs = 0;
    std::map<QString, double> sums;  // additive evidence figures
  };
  using Key = std::pair<int, QString>;
  static Key keyOf(const tmon::Finding &f);
  void merge(const tmon::Finding &f, const tmon::TimeRange &span);
  void addCycle(const tmon::Finding &f);
  bool oversubscribedOfRun(const ReportRows &rows, tmon::Finding *f) const;
  bool undersubscribedOfRun(const ReportRows &rows, tmon::Finding *f) const;
  bool barrierOfRun(const ReportRows &rows, tmon::Finding *f) const;
  bool runtimeOfRun(const ReportRows &rows, tmon::Finding *f) const;
  std::vector<tmon::Finding> neverRunsOfRun(const ReportRows &rows) const;
  std::vector<tmon::Finding> userThreadsOfRun(const ReportRows &rows) const;
  bool barrierOfRun(const ReportRows &rows, uint32_t object, const QString &objectName,
                    tmon::Finding *f) const;

  std::vector<tmon::Finding> cycles_;  // merge Cycle: one per cycle
  std::vector<tmon::Finding> newest_;  // merge Newest: the newest window's
  // data_lost's inputs of the newest window, the threads with gaps of all:
  // the finding is made once at the end, of the whole run (findings()).
  tmon::findings_detail::DataLostInputs dataLost_;
  std::set<uint32_t> programTids_;  // of every window
  // oversubscribed's inputs summed over every window (FindingInputs): the
  // runnable time beyond the CPUs, the CPUs' busy time over the time it is
  // known, each program thread's time wanting a CPU and its life.
  double runnableBeyondCpusNs_ = 0, cpuBusyNs_ = 0, cpuKnownNs_ = 0;
  int cpus_ = 0;
  std::map<uint32_t, std::pair<int64_t, int64_t>> active_;
  // undersubscribed's: the idle phases' time summed, the most threads
  // holding a CPU at once in any window.
  int64_t idlePhaseNs_ = 0;
  double maxOccupying_ = 0;
  // barrier_imbalance's rounds of every window, tallied by object.
  std::map<uint32_t, tmon::findings_detail::BarrierTally> barriers_;
  // gil_contention's and java_lock's objects of every window, summed.
  std::map<uint32_t, tmon::FindingInputs::RuntimeObject> runtime_;
  // Per hidden lock: the window's finding under the rule's share with the
  // most wait (FindingInputs::internalUnder).
  std::map<uint32_t, tmon::Finding> internalUnder_;
  // never_runs' waits of every program thread in every window, summed by
  // tid, and whether any window's capture told a sleep's cause.
  std::map<uint32_t, tmon::FindingInputs::Waiting> waiting_;
  bool sleepKnown_ = false;
  // user_thread_handoff's: the times user threads were put on an LWP.
  int64_t userSpansBegun_ = 0;
  std::map<Key, Merged> merged_;
  int windows_ = 0;
  int64_t windowNs_ = 0, startNs_ = 0;
  bool fromDetail_ = false;
};

#endif
