// M:N findings (docs/findings.md): user threads sharing fewer LWPs
// (user_threads_share_lwps), and user threads handed between LWPs so often
// that the handoff costs more than bound threads would (user_thread_handoff:
// the M-to-N study's fine-grained barrier).
#include <algorithm>
#include <map>
#include <set>

#include "findings_util.h"

namespace tmon {
namespace findings_detail {

namespace {

// The spans of user thread i in r that began in it: one cut by r's start
// (clipped to start there) is the window's before's, as a streamed report
// adds them up.
int64_t spansBegun(const SessionModel &m, int i, const TimeRange &r) {
  int64_t n = 0;
  for (const UserSpan &s : m.userThreadSpans(i, r)) n += s.start > r.t0 || r.t0 <= m.startNs();
  return n;
}

UserPool poolOf(const SessionModel &m, const TimeRange &r) {
  UserPool p;
  std::set<uint32_t> lwps;
  for (int i = 0; i < m.userThreadCount(); i++) {
    UserThreadStates st = m.userThreadStates(i, r);
    if (st.onLwpNs + st.dispatchableNs <= 0) continue;
    addUser(&p, m.userThread(i).id, st, &lwps);
    p.spans += int64_t(m.userThreadSpans(i, r).size());
  }
  p.lwps.assign(lwps.begin(), lwps.end());
  for (uint32_t tid : p.lwps) {
    const int at = m.indexOfTid(tid);
    if (at < 0) continue;
    const StateTimes st = m.threadStatesAttributed(at, r);
    for (size_t k = 0; k < st.ns.size(); k++) p.lwpStates.ns[k] += st.ns[k];
    p.lwpStates.lifetimeNs += st.lifetimeNs;
    p.lwpNs += m.threadStates(at, r).lifetimeNs;
  }
  return p;
}

QString userCount(int n) {
  return n == 1 ? QStringLiteral("1 user thread") : QStringLiteral("%1 user threads").arg(n);
}
QString lwpCount(size_t n) {
  return n == 1 ? QStringLiteral("1 LWP") : QStringLiteral("%1 LWPs").arg(n);
}

QJsonArray idArray(const std::vector<uint32_t> &ids) {
  QJsonArray a;
  for (uint32_t id : ids) a.append(qint64(id));
  return a;
}

void shareLwps(int cpus, const TimeRange &r, const UserPool &p, std::vector<Finding> *out) {
  if (p.userIds.size() <= p.lwps.size() || p.lwps.empty()) return;
  const int atOnce = std::min(int(p.lwps.size()), cpus);
  const double disp = double(p.dispatchableNs) / double(p.lifeNs);
  Finding f;
  f.kind = FindingKind::UserThreadsShareLwps;
  // More LWPs than CPUs already cannot help; fewer could run more at once.
  f.severity = disp >= finding::kUserDispatchableShare && int(p.lwps.size()) < cpus
                   ? Severity::Medium
                   : Severity::Low;
  f.threads = p.lwps;
  f.t0 = r.t0;
  f.t1 = r.t1;
  f.message = QStringLiteral("%1 share %2: at most %3 run at once%4; they were dispatchable "
                             "(off an LWP: waiting for one, or parked by their scheduler) %5 "
                             "of the time.")
                  .arg(userCount(int(p.userIds.size())), lwpCount(p.lwps.size()))
                  .arg(atOnce)
                  .arg(int(p.lwps.size()) > cpus
                           ? QStringLiteral(" (the machine's %1 CPUs)").arg(cpus)
                           : QString(),
                       percent(disp));
  if (f.severity == Severity::Medium)
    f.message += QStringLiteral(" With %1 CPUs, more LWPs would run more of them at once.")
                     .arg(cpus);
  f.evidence["user_threads"] = idArray(p.userIds);
  f.evidence["lwps"] = tidArray(p.lwps);
  f.evidence["cpus"] = cpus;
  f.evidence["dispatchable_share"] = disp;
  out->push_back(std::move(f));
}

// The LWPs' own time (between user threads: their scheduler), by state:
// their whole states less those while running user threads.
StateTimes schedulerStates(const UserPool &p) {
  StateTimes own = p.lwpStates;
  for (size_t k = 0; k < own.ns.size(); k++)
    own.ns[k] = std::max<int64_t>(0, own.ns[k] - p.onLwp.ns[k]);
  own.lifetimeNs = std::max<int64_t>(0, own.lifetimeNs - p.onLwp.lifetimeNs);
  return own;
}

void handoff(const TimeRange &r, const UserPool &p, std::vector<Finding> *out) {
  if (p.userIds.size() < 2 || p.lwps.empty() || p.spans == 0) return;
  const double seconds = double(r.length()) / 1e9;
  const double perSecond = double(p.spans) / seconds;
  const double perSpanUs = double(p.onLwpNs) / double(p.spans) / 1e3;
  const double disp = double(p.dispatchableNs) / double(p.lifeNs);
  if (perSpanUs > finding::kHandoffMaxSpanUs || disp < finding::kUserDispatchableShare) return;
  StateTimes own = schedulerStates(p);
  const int64_t lwpNs = p.lwpNs;
  if (lwpNs <= 0) return;
  // Parked in the scheduler (no user thread ready on its queue, or waiting
  // for its lock) or woken and waiting for a CPU: an LWP not running one.
  int64_t idle = own.ns[size_t(FinalState::Runnable)] + own.ns[size_t(FinalState::Sleeping)] +
                 own.ns[size_t(FinalState::Idle)];
  for (int s = 0; s < kFinalStateCount; s++)
    if (isBlockedState(FinalState(s))) idle += own.ns[size_t(s)];
  const double idleShare = double(idle) / double(lwpNs);
  if (idleShare < finding::kHandoffIdleShare) return;
  Finding f;
  f.kind = FindingKind::UserThreadHandoff;
  // Medium, not high: unbound threads also save the kernel's wake-ups (on
  // Linux they can be the faster choice, docs/benchmarks.md); the user
  // decides with both figures.
  f.severity = Severity::Medium;
  f.threads = p.lwps;
  f.t0 = r.t0;
  f.t1 = r.t1;
  f.message =
      QStringLiteral("%1 gave up their LWPs %2 times a second, running %3 us on average each "
                     "time, and were dispatchable %4 of the time; meanwhile their %5 spent %6 "
                     "of the time in their scheduler parked or waiting for a CPU. Each handoff "
                     "(made ready by another user thread, then picked up by an LWP that may "
                     "first have to be woken) costs more than the work between switches. Bound "
                     "threads (one user thread per LWP, blocking in the kernel) do not pay it, "
                     "but pay a kernel wake-up per wait instead: the M-to-N study found "
                     "fine-grained barriers up to 15% slower unbound on Solaris; time both.")
          .arg(userCount(int(p.userIds.size())))
          .arg(qint64(perSecond))
          .arg(perSpanUs, 0, 'f', 1)
          .arg(percent(disp), lwpCount(p.lwps.size()), percent(idleShare));
  f.evidence["user_threads"] = idArray(p.userIds);
  f.evidence["lwps"] = tidArray(p.lwps);
  f.evidence["dispatches_per_s"] = perSecond;
  f.evidence["mean_run_us"] = perSpanUs;
  f.evidence["dispatchable_share"] = disp;
  f.evidence["lwp_scheduler_idle_share"] = idleShare;
  out->push_back(std::move(f));
}

}  // namespace

void addUser(UserPool *p, uint32_t id, const UserThreadStates &st, std::set<uint32_t> *lwps) {
  p->userIds.push_back(id);
  p->lifeNs += st.onLwpNs + st.dispatchableNs;
  p->onLwpNs += st.onLwpNs;
  p->dispatchableNs += st.dispatchableNs;
  for (size_t k = 0; k < st.onLwp.ns.size(); k++) p->onLwp.ns[k] += st.onLwp.ns[k];
  p->onLwp.lifetimeNs += st.onLwp.lifetimeNs;
  for (const auto &[tid, ns] : st.lwpNs) lwps->insert(tid);
}

void userPoolFindings(const UserPool &p, int cpus, const TimeRange &r, std::vector<Finding> *out) {
  if (p.userIds.empty()) return;
  shareLwps(std::max(1, cpus), r, p, out);
  handoff(r, p, out);
}

void userThreadFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  if (m.userThreadCount() == 0) return;
  if (FindingInputs *in = inputsFor(m, r))
    for (int i = 0; i < m.userThreadCount(); i++) in->userSpansBegun += spansBegun(m, i, r);
  userPoolFindings(poolOf(m, r), m.cpuCount(), r, out);
}

}  // namespace findings_detail
}  // namespace tmon
