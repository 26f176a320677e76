// Scheduling findings: oversubscribed, undersubscribed, never_runs
// (docs/findings.md).
#include <algorithm>

#include "findings_util.h"
#include "threadtimeline.h"

namespace tmon {
namespace findings_detail {

namespace {

// Bins for the phase analysis: about kBinNs each, at most kMaxBins.
constexpr int64_t kBinNs = 50'000'000;
constexpr int64_t kMaxBins = 20000;
// A thread counts as active (or waiting for others) in a bin from half a
// thread's worth of time on.
constexpr double kHalfThread = 0.5;

// The program's threads per bin of r, in average threads.
struct Bins {
  int64_t bin = 0;
  // Where bin 0 starts: on the run's grid (from the session's start), at or
  // before the range's start, so that a streamed report's windows bin their
  // time as a whole read does. Its first and last bins may be cut short.
  int64_t base = 0;
  std::vector<int64_t> len;
  std::vector<double> active;        // on a CPU or runnable
  std::vector<double> busyRunnable;  // runnable, of the threads that want to run (wantsToRun)
  std::vector<double> waiting;   // at a barrier
  // Holding a CPU: active plus runtime yield-spins, which wait for peers
  // (not "wanting" a CPU) but keep one busy, so they idle none.
  std::vector<double> occupying;
  std::vector<double> idleCpus;  // machine-wide idle CPUs (/proc/stat), -1 unknown
};

// A thread that wants to run: a tenth of its life on a CPU or runnable.
// Idle background threads would dilute oversubscription's share (8
// connection threads 55% runnable read as no problem among 40 idle ones).
bool wantsToRun(const ProgramThread &p) {
  const int64_t active = p.st.ns[size_t(FinalState::OnCpu)] + p.st.ns[size_t(FinalState::Runnable)];
  return p.st.lifetimeNs > 0 && double(active) >= 0.1 * double(p.st.lifetimeNs);
}

Bins binsOf(const SessionModel &m, const TimeRange &r, const std::vector<ProgramThread> &pts) {
  Bins b;
  // Divided before rounded up: no sum here can overflow, whatever r is.
  const int64_t len = r.length();
  b.bin = std::max(kBinNs, len / kMaxBins + (len % kMaxBins != 0));
  // 1 s windows 18 ms off the run's 50 ms grid read their idle phases 68 ms
  // short in a 2.5 s run (undersubscribed 0.871 against 0.899 whole).
  int64_t sinceStart = 0;
  b.base = r.t0;
  if (m.startNs() < r.t0 && !__builtin_sub_overflow(r.t0, m.startNs(), &sinceStart))
    b.base = r.t0 - sinceStart % b.bin;
  const int64_t span = r.t1 - b.base;
  size_t nb = size_t(span / b.bin + (span % b.bin != 0));
  b.len.assign(nb, 0);
  b.active.assign(nb, 0);
  b.busyRunnable.assign(nb, 0);
  b.waiting.assign(nb, 0);
  b.occupying.assign(nb, 0);
  b.idleCpus.assign(nb, -1);
  // Sparse /proc/stat samples (one per ~50 ms) are interpolated by the model.
  const std::vector<double> busy = m.cpuBusyShares(TimeRange{b.base, r.t1}, b.bin);
  for (size_t k = 0; k < nb; k++) {
    int64_t s = b.base + int64_t(k) * b.bin;
    b.len[k] = std::min(r.t1, s + b.bin) - std::max(r.t0, s);
    if (k < busy.size() && busy[k] >= 0) b.idleCpus[k] = (1.0 - busy[k]) * m.cpuCount();
  }
  auto spreadBy = [&](std::vector<double> &v, int64_t s, int64_t e, double sign) {
    s = std::max(s, r.t0);
    e = std::min(e, r.t1);
    while (s < e) {
      size_t k = size_t((s - b.base) / b.bin);
      int64_t be = std::min(e, b.base + int64_t(k + 1) * b.bin);
      v[k] += sign * double(be - s);
      s = be;
    }
  };
  const TickTimes &ticks = m.tickTimes();
  // Holding a CPU (stolen time too: the hypervisor ran something else on
  // it); runnable; at a barrier.
  constexpr uint32_t kHeld = 1u << unsigned(FinalState::OnCpu) |
                             1u << unsigned(FinalState::Runnable) |
                             1u << unsigned(FinalState::Stolen);
  constexpr uint32_t kRunnable = 1u << unsigned(FinalState::Runnable);
  constexpr uint32_t kBarrier = 1u << unsigned(FinalState::BlockedBarrier);
  static_assert(kFinalStateCount <= 32, "a state's bit in a word");
  for (const ProgramThread &p : pts) {
    const bool wants = wantsToRun(p);
    // Runnable time counts as busy only for a thread that wants to run.
    const uint32_t wantedRunnable = wants ? kRunnable : 0;
    // Read in place, a piece at a time, in time order: a bin's sums are
    // kept in integers until a piece goes past it (the bins add whole
    // nanoseconds, exact in a double in any order), where a division per
    // piece for its bin, for each of four bins, was 80 instructions.
    size_t k = 0;
    int64_t binEnd = INT64_MIN, held = 0, runnable = 0, waiting = 0;
    const auto flush = [&] {
      if (binEnd == INT64_MIN) return;
      b.occupying[k] += double(held);
      b.busyRunnable[k] += double(runnable);
      b.waiting[k] += double(waiting);
      held = runnable = waiting = 0;
    };
    const auto add = [&](uint32_t bit, int64_t d) __attribute__((always_inline)) {
      if (bit & kHeld) held += d;
      if (bit & wantedRunnable) runnable += d;
      if (bit & kBarrier) waiting += d;
    };
    // A piece past the bin: its parts bin by bin. Out of line (rare), so
    // that the callback inlines in forEachPiece.
    const auto crossing = [&](uint32_t bit, int64_t s, int64_t e) __attribute__((noinline)) {
      while (s < e) {
        if (s >= binEnd) {
          flush();
          k = size_t((s - b.base) / b.bin);
          binEnd = std::min(r.t1, b.base + int64_t(k + 1) * b.bin);
        }
        const int64_t d = std::min(e, binEnd) - s;
        add(bit, d);
        s += d;
      }
    };
    // Pieces come clipped to r, in time order: each starts in the bin or after it.
    m.settledTimeline(p.index).forEachPiece(
        r, ticks, [&](const StateInterval &iv) __attribute__((always_inline)) {
          const uint32_t bit = 1u << unsigned(iv.state);
          if (!(bit & (kHeld | kBarrier))) return;
          if (iv.end > binEnd)
            crossing(bit, iv.start, iv.end);
          else
            add(bit, iv.end - iv.start);
        });
    flush();
    // A yield-spin before a runtime's wait (a C++20 barrier's) wants no CPU:
    // it waits for its peers (it read as oversubscribed: fewer threads).
    // For idle phases a spinner is no sleeper at the barrier: it holds its
    // CPU (a C++20 barrier loop read as HIGH undersubscribed, 1 run in 5).
    for (const StateInterval &iv : m.spinWaits(p.index, r)) {
      spreadBy(b.active, iv.start, iv.end, -1);
      if (wants) spreadBy(b.busyRunnable, iv.start, iv.end, -1);
    }
    // Workers that exited early are not counted: every run ends with a tail
    // of threads finishing at slightly different times, which short runs
    // would report as a phase problem (seen on cpp_threads: 18%).
  }
  // Active: holding a CPU, less the spins (summed apart above).
  for (size_t k = 0; k < nb; k++) b.active[k] += b.occupying[k];
  for (size_t k = 0; k < nb; k++) {
    if (b.len[k] <= 0) continue;
    b.active[k] /= double(b.len[k]);
    b.busyRunnable[k] /= double(b.len[k]);
    b.waiting[k] /= double(b.len[k]);
    b.occupying[k] /= double(b.len[k]);
  }
  return b;
}

void oversubscribed(const SessionModel &m, const TimeRange &r, const std::vector<ProgramThread> &pts,
                    const Bins &b, std::vector<Finding> *out) {
  // The threads that want to run (wantsToRun).
  FindingInputs *in = inputsFor(m, r);
  std::vector<uint32_t> busyTids;
  int64_t life = 0;
  for (const ProgramThread &p : pts) {
    if (wantsToRun(p)) {
      busyTids.push_back(p.tid);
      life += p.st.lifetimeNs;
    }
    const int64_t active = p.st.ns[size_t(FinalState::OnCpu)] + p.st.ns[size_t(FinalState::Runnable)];
    if (in) in->active.push_back(FindingInputs::Active{p.tid, active, p.st.lifetimeNs});
  }
  if (life <= 0 && !in) return;
  // Runnable time counts only where the program itself had more threads
  // wanting a CPU than there are CPUs: other processes on a busy machine
  // are not the program's oversubscription.
  double runnable = 0;
  int cpus = m.cpuCount();
  // Of a bin's runnable time, only the threads beyond the CPU count are the
  // program's own doing; the rest waited for other processes. It is the
  // busy threads' runnable time whose share is told: a herd of threads that
  // each wake briefly (2,000 waking every 100 ms) made them beyond the CPUs
  // too, and counted as the one busy thread's, read "745% of their time".
  for (size_t k = 0; k < b.len.size(); k++)
    if (b.active[k] > cpus + kHalfThread)
      runnable += std::min(b.busyRunnable[k], b.active[k] - cpus) * double(b.len[k]);
  const double busy = m.cpuBusyShare(r);
  if (in) {
    in->runnableBeyondCpusNs = runnable;
    in->cpus = cpus;
    in->cpuBusy = busy;
  }
  Finding f;
  if (oversubscribedFinding(busyTids, life, runnable, cpus, busy, r, &f))
    out->push_back(std::move(f));
}

}  // namespace

bool oversubscribedFinding(const std::vector<uint32_t> &busyTids, int64_t life, double runnable,
                           int cpus, double busy, const TimeRange &r, Finding *f) {
  if (life <= 0) return false;
  double share = runnable / double(life);
  if (share < finding::kOversubscribedShare) return false;
  f->kind = FindingKind::Oversubscribed;
  f->severity = severityByShare(share, finding::kOversubscribedShare);
  f->t0 = r.t0;
  f->t1 = r.t1;
  // Name the threads that wanted CPU time, not the ones parked in a join.
  f->threads = busyTids;
  const size_t busyThreads = f->threads.size();
  f->message = QStringLiteral(
                   "More threads wanted to run than there are CPUs: %1 busy threads "
                   "spent %2 of their time ready to run but waiting for "
                   "one of the %3 CPUs. Fewer threads, about one per CPU, would do the "
                   "same work with less switching.")
                   .arg(busyThreads)
                   .arg(percent(share))
                   .arg(cpus);
  f->evidence["threads"] = tidArray(f->threads);
  f->evidence["busy_threads"] = qint64(busyThreads);
  f->evidence["runnable_s"] = runnable / 1e9;
  f->evidence["threads_lifetime_s"] = double(life) / 1e9;
  f->evidence["share"] = share;
  f->evidence["cpus"] = cpus;
  f->evidence["cpu_busy"] = busy >= 0 ? QJsonValue(busy) : QJsonValue();
  return true;
}

namespace {

void undersubscribed(const SessionModel &m, const TimeRange &r, const std::vector<ProgramThread> &pts,
                     const Bins &b, std::vector<Finding> *out) {
  const int cpus = m.cpuCount();
  if (cpus < 2) return;
  double maxActive = 0;
  int64_t under = 0;
  for (size_t k = 0; k < b.len.size(); k++) {
    // A bin cut short (a range's last, a streamed window's edge) is no
    // phase: 15 ms of both threads running read 1.57 threads at once where
    // the run's 50 ms bins never passed 1.45 (a streamed report's HIGH
    // undersubscribed that the whole read had not).
    if (2 * b.len[k] >= b.bin || b.len.size() == 1) maxActive = std::max(maxActive, b.occupying[k]);
    // The CPUs must really idle: on a machine other processes keep busy,
    // the program's tail costs nothing (and a finishing order is noise).
    bool idle = b.idleCpus[k] < 0 || b.idleCpus[k] >= kHalfThread;
    if (b.occupying[k] < cpus - kHalfThread && b.occupying[k] >= kHalfThread &&
        b.waiting[k] >= kHalfThread && idle)
      under += b.len[k];
  }
  if (FindingInputs *in = inputsFor(m, r)) {
    in->idlePhaseNs = under;
    in->maxOccupying = maxActive;
  }
  std::vector<uint32_t> tids;
  for (const ProgramThread &p : pts) tids.push_back(p.tid);
  Finding f;
  if (undersubscribedFinding(tids, under, maxActive, cpus, m.cpuBusyShare(r), r, &f))
    out->push_back(std::move(f));
}

}  // namespace

bool undersubscribedFinding(const std::vector<uint32_t> &tids, int64_t idlePhaseNs,
                            double maxOccupying, int cpus, double cpuBusy, const TimeRange &r,
                            Finding *f) {
  // Only a program that can fill the CPUs has phases that leave them idle.
  if (cpus < 2 || maxOccupying < cpus - kHalfThread || r.length() <= 0) return false;
  const double share = double(idlePhaseNs) / double(r.length());
  if (share < finding::kUndersubscribedShare) return false;
  f->kind = FindingKind::Undersubscribed;
  f->severity = severityByShare(share, finding::kUndersubscribedShare);
  f->threads = tids;
  f->t0 = r.t0;
  f->t1 = r.t1;
  f->message = QStringLiteral(
                   "For %1 of the run some CPUs sat idle while threads that had finished "
                   "their part waited at a barrier for the others: either the work "
                   "between barriers is unevenly split, or the pieces are so small that "
                   "putting threads to sleep and waking them costs a visible share. "
                   "Evenly split pieces large enough to dwarf a wake-up, or work handed "
                   "out as threads become free, keep every CPU busy.")
                   .arg(percent(share));
  f->evidence["idle_phase_s"] = double(idlePhaseNs) / 1e9;
  f->evidence["run_s"] = double(r.length()) / 1e9;
  f->evidence["share"] = share;
  f->evidence["cpus"] = cpus;
  f->evidence["max_active_threads"] = maxOccupying;
  f->evidence["cpu_busy"] = cpuBusy;
  return true;
}

void schedulingFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  std::vector<ProgramThread> pts = programThreads(m, r);
  Bins b = binsOf(m, r, pts);
  oversubscribed(m, r, pts, b, out);
  undersubscribed(m, r, pts, b, out);
}

namespace {

// What the model knows of p's waits over r besides its states.
FindingInputs::Waiting waitingOf(const SessionModel &m, const ProgramThread &p,
                                 const TimeRange &r) {
  FindingInputs::Waiting w;
  w.tid = p.tid;
  w.internalWaitNs = int64_t(m.internalWaitNs(p.index, r));
  // Where its transitions were lost (a capture gap: disk full, the
  // descriptor taken; rings overrun) its state is the kernel's guess, not
  // a wait seen.
  for (const TimeRange &g : m.eventGapSpans(p.index, r))
    w.gapNs += std::max<int64_t>(0, std::min(g.t1, r.t1) - std::max(g.t0, r.t0));
  w.chosenSleepNs = m.chosenSleepNs(p.index, r);
  w.asleep = m.asleepTicksByKind(p.index, r);
  w.sampled = m.lwpSampleCount(p.index) != 0;
  return w;
}

}  // namespace

void neverRunsFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  // Read from outside with /proc only (no ptrace: no wrapper, system call,
  // futex word or stack), a sleeping thread's cause is unknown: a thread
  // blocked on a mutex reads as asleep, which is no evidence of anything.
  // Only one kept off the CPUs (its run-queue time, which /proc has) is.
  const bool sleepKnown =
      m.info().acquisitionsKnown() || m.info().hasSource(THREADMON__SOURCE__SOURCE_FUTEX_SAMPLING);
  FindingInputs *in = inputsFor(m, r);
  if (in) in->sleepKnown = sleepKnown;
  auto name = [&m](uint32_t tid) { return threadName(m, tid); };
  for (const ProgramThread &p : programThreads(m, r)) {
    Finding f;
    bool found;
    if (in) {
      // A streamed report sums every thread's, whatever its window says.
      in->waiting.push_back(waitingOf(m, p, r));
      found = neverRunsFinding(
          p, [in] { return in->waiting.back(); }, sleepKnown, name, r, &f);
    } else {
      found = neverRunsFinding(
          p, [&] { return waitingOf(m, p, r); }, sleepKnown, name, r, &f);
    }
    if (found) out->push_back(std::move(f));
  }
}

bool neverRunsFinding(const ProgramThread &p,
                      const std::function<FindingInputs::Waiting()> &waiting, bool sleepKnown,
                      const std::function<QString(uint32_t)> &threadName, const TimeRange &r,
                      Finding *f) {
  const int64_t life = p.st.lifetimeNs;
  if (life < finding::kNeverRunsMinLifeNs ||
      double(life) < finding::kNeverRunsMinSessionShare * double(r.length()))
    return false;
  // Stolen time was time on a CPU as far as the scheduler knows.
  const double onCpu =
      double(p.st.ns[size_t(FinalState::OnCpu)] + p.st.ns[size_t(FinalState::Stolen)]) /
      double(life);
  if (onCpu >= finding::kNeverRunsOnCpu) return false;
  const FindingInputs::Waiting w = waiting();
  int64_t sync = w.internalWaitNs;
  for (int s = 0; s < kFinalStateCount; s++)
    if (isBlockedState(FinalState(s))) sync += p.st.ns[size_t(s)];
  // Its waits are a share of the time whose state is known (not in gaps).
  const int64_t unknown = w.gapNs;
  if (2 * unknown >= life) return false;
  const double syncShare = double(sync) / double(life - unknown);
  // Without a single kernel sample the model cannot tell on-CPU time apart.
  if (syncShare >= finding::kNeverRunsMaxSyncBlocked || !w.sampled) return false;
  const double runnable = double(p.st.ns[size_t(FinalState::Runnable)]) / double(life);
  // Sleeping it asked for (nanosleep, usleep) is a design choice, e.g. a
  // timer thread: only time off the CPUs it did not choose counts.
  const double chosenSleep = double(w.chosenSleepNs) / double(life);
  // Idle, waiting for work: an event loop in poll/epoll (memcached's
  // workers and listener without clients), a listener in accept, a reader
  // of a socket or pipe. Nothing a server's author would fix.
  const double idle = double(p.st.ns[size_t(FinalState::Idle)]) / double(life);
  // What is left is time in a system call that says nothing of why: it
  // must be most of the thread's life (a client that slept 45% of its
  // life by choice and waited for answers 38% was flagged for the sum).
  const double stuck = std::max(0.0, 1.0 - onCpu - runnable - syncShare - chosenSleep - idle);
  const bool starved = runnable >= 0.5;
  if (!starved && (stuck < finding::kNeverRunsMinStuck || !sleepKnown)) return false;
  // What its syscalls waited for, by the ticks that found it asleep.
  uint64_t asleepAll = 0;
  for (uint64_t n : w.asleep) asleepAll += n;
  int mostly = -1;  // the kind of at least half of those ticks
  for (int k = 0; k < kAsleepKinds; k++)
    if (asleepAll && 2 * w.asleep[size_t(k)] >= asleepAll) mostly = k;
  // Waiting for child processes or signals, or a sleep made by syscall():
  // what such a thread is for (a parent of worker processes, a signal
  // thread, a timer), not a thread that cannot run.
  if (!starved && (mostly == THREADMON__ASLEEP_KIND__ASLEEP_CHILD ||
                   mostly == THREADMON__ASLEEP_KIND__ASLEEP_SIGNAL ||
                   mostly == THREADMON__ASLEEP_KIND__ASLEEP_SLEEP))
    return false;
  f->kind = FindingKind::NeverRuns;
  f->severity = Severity::Medium;
  f->threads = {p.tid};
  f->t0 = r.t0;
  f->t1 = r.t1;
  f->message = starved
                   ? QStringLiteral(
                         "%1 was alive for %2 s but ran for only %3 of it: it was ready to run %4 "
                         "of the time and never got a CPU. Other threads (or a higher priority) "
                         "keep it off the CPUs.")
                         .arg(threadName(p.tid))
                         .arg(double(life) / 1e9, 0, 'f', 2)
                         .arg(QString::number(100 * onCpu, 'f', 2) + '%', percent(runnable))
                   : QStringLiteral(
                         "%1 was alive for %2 s but ran for only %3 of it, and was not waiting for "
                         "a lock or another thread, nor in a sleep call: it sat in the kernel in "
                         "a system call that never returned %4 of the time.")
                         .arg(threadName(p.tid))
                         .arg(double(life) / 1e9, 0, 'f', 2)
                         .arg(QString::number(100 * onCpu, 'f', 2) + '%', percent(stuck));
  f->evidence["tid"] = qint64(p.tid);
  f->evidence["lifetime_s"] = double(life) / 1e9;
  f->evidence["on_cpu_share"] = onCpu;
  f->evidence["runnable_share"] = runnable;
  f->evidence["sync_blocked_share"] = syncShare;
  f->evidence["chosen_sleep_share"] = chosenSleep;
  f->evidence["idle_share"] = idle;
  static const char *const kinds[kAsleepKinds] = {"other", "child",  "io_events",
                                                  "read",  "signal", "sleep"};
  if (mostly >= 0) f->evidence["asleep_in"] = QString::fromLatin1(kinds[mostly]);
  return true;
}

}  // namespace findings_detail
}  // namespace tmon
