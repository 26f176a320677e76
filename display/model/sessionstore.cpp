#include "sessionstore.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "runtimesync.h"
#include "sourcelines.h"
#include "symbolname.h"
#include "tmnotices.h"
#include "tmwire.h"

namespace tmon {

namespace {

QString str(const char *s) { return s ? QString::fromUtf8(s) : QString(); }
int64_t ns(uint64_t v) { return v > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(v); }
uint64_t sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// A step of the probe's CPU budget ladder (probe/sample/budget.c's Notice).
bool isDetailStep(const QString &notice) {
  return notice.contains(QLatin1String("(THREADMON_BUDGET "));
}

// A frame as shown: demangled, and " (file:line)" when this machine has
// the module's debug information (where: its CodeLocation, if sent).
QString shownFrame(const char *frame, const Threadmon__CodeLocation *where) {
  QString text = readableFrame(str(frame));
  if (!where || !splitFrame(text).location.isEmpty()) return text;
  const QString line = sourceLine(codeLocationOf(*where));
  return line.isEmpty() ? text : text + QStringLiteral(" (%1)").arg(line);
}

// The C type of a kind's objects, as the debug information names it.
const char *cTypeName(int kind) {
  switch (kind) {
    case THREADMON__SYNC_KIND__KIND_MUTEX:
      return "pthread_mutex_t";
    case THREADMON__SYNC_KIND__KIND_COND:
      return "pthread_cond_t";
    case THREADMON__SYNC_KIND__KIND_RWLOCK:
      return "pthread_rwlock_t";
    case THREADMON__SYNC_KIND__KIND_SPIN:
      return "pthread_spinlock_t";
    case THREADMON__SYNC_KIND__KIND_BARRIER:
      return "pthread_barrier_t";
    case THREADMON__SYNC_KIND__KIND_SEM:
      return "sem_t";
    default:
      return nullptr;
  }
}

// One folded total per wire state: numbered 0..kWireStates-1 (the proto
// has no two states with one number).
#define TM_WIRE_STATE(name, number) \
  static_assert(number < kWireStates, "wire states are numbered 0..n-1: " #name);
#include "states.def"

// Folded totals (cumulative) of a sample or of the thread's end: kept in
// time order; one older than the last (a late tick) says nothing new.
void noteFolds(ThreadInfo &info, int64_t t, size_t n, const uint64_t *ns, uint64_t changes) {
  if (!info.folds.empty() && info.folds.back().t >= t) return;
  FoldPoint p;
  p.t = t;
  p.changes = changes;
  for (size_t i = 0; i < n && i < size_t(kWireStates); i++) p.ns[i] = ns[i];
  info.folds.push_back(p);
}

// The OR of n values, read as SSE2 pairs four at a time (an OR per value
// was 4 instructions).
uint64_t bitsOfAny(const int64_t *v, size_t n) {
  typedef uint64_t Pair __attribute__((vector_size(16)));
  Pair ored = {0, 0}, ored2 = {0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Pair d, d2;
    std::memcpy(&d, v + i, sizeof d);
    std::memcpy(&d2, v + i + 2, sizeof d2);
    ored |= d;
    ored2 |= d2;
  }
  ored |= ored2;
  uint64_t any = ored[0] | ored[1];
  for (; i < n; i++) any |= uint64_t(v[i]);
  return any;
}

}  // namespace

// Inline (the model is built -fPIC, where a function defined out of line
// is never inlined): asked for every record folded.
inline void SessionStore::seeTime(int64_t t) {
  earliest_ = std::min(earliest_, t);
  latest_ = std::max(latest_, t);
}

// The thread's index, made on first sight (newThread).
inline int SessionStore::threadIndexFor(uint32_t tid, int64_t t) {
  const int index = tidIndex.findAndRemember(tid);
  if (index < 0) return newThread(tid, t);
  seeTime(t);
  ThreadTimeline &th = *threads[size_t(index)];
  if (!th.baselineZero && t < th.info.startNs) th.setStart(t);  // first sight was late
  return index;
}

int SessionStore::newThread(uint32_t tid, int64_t t) {
  if (threads.size() >= limits::kMaxThreads) {
    check_.note(FrameCheck::ThreadsFull);
    return -1;
  }
  seeTime(t);
  // Packed interval times count from the window's start (FrameCheck).
  threads.push_back(std::make_unique<ThreadTimeline>(tid, t, check_.base()));
  tidIndex.insert(tid, int(threads.size()) - 1);
  return int(threads.size()) - 1;
}

SessionStore::FoldSlot *SessionStore::foldSlotFor(uint32_t tid, int64_t t) {
  int index = tidIndex.findAndRemember(tid);
  if (index < 0 && (index = newThread(tid, t)) < 0) return nullptr;
  FoldSlot &s = foldSlots_[tid % kFoldSlots];
  s = FoldSlot{threads[size_t(index)].get(), tid, -1};
  return &s;
}

ThreadTimeline *SessionStore::threadFor(uint32_t tid, int64_t t) {
  const int index = threadIndexFor(tid, t);
  return index < 0 ? nullptr : threads[size_t(index)].get();
}

SyncEntry *SessionStore::syncFor(uint32_t id) {
  auto it = syncIndex.find(id);
  if (it != syncIndex.end()) return &sync[size_t(it->second)];
  if (sync.size() >= limits::kMaxSyncObjects) {
    check_.note(FrameCheck::ObjectsFull);
    return nullptr;
  }
  sync.push_back(SyncEntry{});
  sync.back().info.id = id;
  syncIndex[id] = int(sync.size()) - 1;
  return &sync.back();
}

inline void SessionStore::rejected(const ThreadTimeline &th, ThreadTimeline::Added a,
                                   int64_t t) {
  if (a == ThreadTimeline::Added::Crowded) check_.note(FrameCheck::SameInstant);
  if (a == ThreadTimeline::Added::Late && t < th.rawFloor()) info.lateEventsIgnored++;
}

QString SessionStore::apply(Threadmon__Frame &frame) {
  unsettled_ = true;
  QString err = check_.check(&frame) ? fold(frame) : QString();
  check_.restore();
  if (check_.takeChanged()) info.inputWarnings = check_.lines();
  if (keepNs_ && frame.body_case == THREADMON__FRAME__BODY_TICK) evictOld();
  return err;
}

void SessionStore::keepDetailFor(int64_t keepNs) {
  keepNs_ = keepNs > 0 ? std::max(keepNs, 2 * ThreadTimeline::kRawKeepNs) : 0;
}

int64_t SessionStore::detailFrom() const {
  return evictedUntil_ == INT64_MIN ? startNs() : evictedUntil_;
}

// Cuts at a tick, so that every thread's intervals and checkpoints end
// at the same time and a tick's mixed split is never cut in two.
void SessionStore::evictOld() {
  if (tickTimes.empty()) return;
  const int64_t target = tickTimes.back() - keepNs_;
  if (target < (evictedUntil_ == INT64_MIN ? startNs() : evictedUntil_) + kEvictEveryNs) return;
  auto at = std::upper_bound(tickTimes.begin(), tickTimes.end(), target);
  if (at == tickTimes.begin()) return;
  const int64_t cut = *(at - 1);
  settle();
  for (auto &th : threads) th->evictBefore(cut);
  activity.evictBefore(cut);
  evictedUntil_ = cut;
}

QString SessionStore::fold(const Threadmon__Frame &f) {
  switch (f.body_case) {
    case THREADMON__FRAME__BODY_HELLO: return f.hello ? applyHello(*f.hello) : QString();
    case THREADMON__FRAME__BODY_GOODBYE: if (f.goodbye) applyGoodbye(*f.goodbye); break;
    case THREADMON__FRAME__BODY_TICK: if (f.tick) applyTick(*f.tick); break;
    case THREADMON__FRAME__BODY_THREAD_START:
      if (f.thread_start) applyThreadStart(*f.thread_start);
      break;
    case THREADMON__FRAME__BODY_THREAD_END: if (f.thread_end) applyThreadEnd(*f.thread_end); break;
    case THREADMON__FRAME__BODY_THREAD_ATTR: if (f.thread_attr) applyThreadAttr(*f.thread_attr); break;
    case THREADMON__FRAME__BODY_SYNC_OBJECT: if (f.sync_object) applySyncObject(*f.sync_object); break;
    case THREADMON__FRAME__BODY_TRANSITIONS: if (f.transitions) applyTransitions(*f.transitions); break;
    case THREADMON__FRAME__BODY_SWITCHES: if (f.switches) applySwitches(*f.switches); break;
    case THREADMON__FRAME__BODY_STACK: if (f.stack) applyStack(*f.stack); break;
    case THREADMON__FRAME__BODY_USER_THREAD:
      if (f.user_thread) {
        if (f.user_thread->time_ns) seeTime(int64_t(f.user_thread->time_ns));
        users.applyUserThread(*f.user_thread, &check_);
      }
      break;
    case THREADMON__FRAME__BODY_USER_SWITCHES:
      if (f.user_switches) {
        const Threadmon__UserSwitches &us = *f.user_switches;
        int64_t t = int64_t(us.base_ns);
        for (size_t i = 0; i < us.n_tid; i++) seeTime(t += us.delta_ns[i]);
        users.applySwitches(us, &check_);
      }
      break;
    case THREADMON__FRAME__BODY_EXEC:
      if (f.exec) applyExec(*f.exec);
      break;
    case THREADMON__FRAME__BODY_NOTICE:
      if (!f.notice) break;
      if (f.notice->text && !strncmp(f.notice->text, TM_NOTICE_FLIGHT, strlen(TM_NOTICE_FLIGHT))) {
        info.flightRecorder = true;
        if (strstr(f.notice->text, TM_NOTICE_FLIGHT_KEPT))
          info.flightDetailFromNs = std::max(info.flightDetailFromNs, ns(f.notice->time_ns));
      }
      if (f.notice->text && !strncmp(f.notice->text, TM_NOTICE_GAP, strlen(TM_NOTICE_GAP)))
        info.captureGap = true;
      if (isDetailStep(str(f.notice->text))) {
        // The budget's latest step replaces the one before (docs/format.md).
        info.detailSteps++;
        info.notices.erase(std::remove_if(info.notices.begin(), info.notices.end(), isDetailStep),
                           info.notices.end());
      }
      if (info.notices.size() < limits::kMaxNotices) info.notices.append(str(f.notice->text));
      else check_.note(FrameCheck::NoticesFull);
      break;
    default: break;  // a body this reader does not know: ignored by the compatibility rule
  }
  return QString();
}

QString SessionStore::applyHello(const Threadmon__Hello &h) {
  if (h.protocol_version != TM_PROTOCOL_VERSION)
    return QStringLiteral("unsupported protocol version %1 (this display speaks %2)")
        .arg(h.protocol_version)
        .arg(TM_PROTOCOL_VERSION);
  info.helloSeen = true;
  info.protocolVersion = h.protocol_version;
  info.probeVersion = str(h.probe_version);
  info.pid = h.pid;
  info.ppid = h.ppid;
  info.parentPid = h.parent_pid;
  info.exe = str(h.exe);
  info.argv.clear();
  for (size_t i = 0; i < h.n_argv; i++) info.argv.append(str(h.argv[i]));
  info.host = str(h.host);
  info.kernel = str(h.kernel);
  info.cpuCount = h.cpu_count;
  info.tickIntervalNs = h.tick_interval_ns;
  info.sources.assign(h.sources, h.sources + h.n_sources);
  info.token = str(h.token);
  info.startNs = ns(h.start_monotonic_ns);
  info.startRealtimeNs = h.start_realtime_ns;
  info.probeTid = h.probe_tid;
  info.sessionId = h.session_id;
  if (h.start_monotonic_ns) seeTime(info.startNs);
  return QString();
}

void SessionStore::applyExec(const Threadmon__Exec &e) {
  ImageChange c;
  c.timeNs = ns(e.time_ns);
  seeTime(c.timeNs);
  c.fromExe = info.exe;
  c.fromArgv = info.argv;
  info.exe = str(e.exe);
  info.argv.clear();
  for (size_t i = 0; i < e.n_argv; i++) info.argv.append(str(e.argv[i]));
  c.toExe = info.exe;
  c.toArgv = info.argv;
  if (info.execs.size() < size_t(limits::kMaxNotices)) info.execs.push_back(std::move(c));
}

void SessionStore::applyGoodbye(const Threadmon__Goodbye &g) {
  info.goodbyeSeen = true;
  info.ended = true;
  info.endNs = g.time_ns ? ns(g.time_ns) : latest_;
  if (g.time_ns) seeTime(info.endNs);
  info.endReason = g.reason;
  info.exitStatus = g.exit_status;
  info.framesDropped = std::max(info.framesDropped, g.frames_dropped);
  info.eventsDropped = std::max(info.eventsDropped, g.events_dropped);
}

void SessionStore::markEnded() {
  if (info.ended) return;
  unsettled_ = true;
  info.ended = true;
  int64_t lastTick = tickTimes.empty() ? INT64_MIN : tickTimes.back();
  info.endNs = std::max(latest_, lastTick);
}

void SessionStore::knownFrom(int64_t t) {
  unsettled_ = true;
  for (auto &th : threads) {
    th->baselineZero = false;
    if (th->info.startNs < t) th->setStart(t);
  }
}

void SessionStore::carrySample(uint32_t tid, const LwpSeries::Point &p,
                               const ThreadTimeline::WaitBeforeBaseline &waitBefore) {
  const int index = tidIndex.find(tid);
  if (index < 0) return;
  ThreadTimeline &th = *threads[size_t(index)];
  // Born after it: another thread of the same tid.
  if (th.info.startNs > p.t) return;
  const LwpSeries::Point *prev = th.lwp.at(p.t);
  const int64_t prevSample = prev ? prev->t : INT64_MIN;
  if (!th.lwp.add(p.t, p.aux, p.v, p.extra)) return;
  th.sampleAdded(INT64_MIN, prevSample);
  th.waitBefore = waitBefore;  // its readings from here on count as they did
  unsettled_ = true;
}

void SessionStore::carryZeroReading(uint32_t tid, int64_t t) {
  const int index = tidIndex.find(tid);
  if (index < 0) return;
  ThreadTimeline &th = *threads[size_t(index)];
  // Born after it (another thread of the same tid), or sampled already.
  if (th.info.startNs > t || th.lwp.size()) return;
  th.carriedZeroNs = t;
  unsettled_ = true;
}

namespace {
constexpr int64_t kFirstTickWithinNs = 1'000'000'000;
// A reading's clock may lag it (the sampler preempted in between).
constexpr int64_t kFirstReadSlackNs = 20'000'000;
}

// A thread counted from its first reading (found by an attach, a child
// watched from outside) may have been waiting for a CPU then: a fork child
// that had not run yet read 0 ms of run queue, and 226 ms 120 ms later, when
// its wait since the fork ended. Its on-CPU and run-queue time cannot grow
// by more than the time between the readings (and the slack a reading's
// clock needs): the excess is the wait before the first reading, dropped
// from its run-queue time from this reading on.
void SessionStore::dropWaitBeforeBaseline(ThreadTimeline *th, const LwpSeries::Point *prev,
                                          int64_t t, int64_t read, LwpSeries::Values *v) {
  ThreadTimeline::WaitBeforeBaseline &w = th->waitBefore;
  if (t >= w.droppedFromNs) {
    (*v)[kRunqueue] -= std::min((*v)[kRunqueue], w.runqueueNs);
    return;
  }
  if (!prev || prev->t != w.sampleNs) return;
  const int64_t gap = read - lwpReadNs(*prev);
  if (gap < 0) return;
  const uint64_t runqueue = sub((*v)[kRunqueue], prev->v[kRunqueue]);
  const uint64_t oncpu = sub((*v)[kOncpu], prev->v[kOncpu]);
  const uint64_t grew = oncpu > UINT64_MAX - runqueue ? UINT64_MAX : oncpu + runqueue;
  if (grew <= uint64_t(gap) + uint64_t(gap / 20) + kFirstReadSlackNs) return;
  w.runqueueNs = std::min(grew - uint64_t(gap), runqueue);
  w.droppedFromNs = t;
  (*v)[kRunqueue] -= w.runqueueNs;
}

void SessionStore::applyTick(const Threadmon__Tick &tk) {
  int64_t t = ns(tk.time_ns);
  auto pos = std::lower_bound(tickTimes.begin(), tickTimes.end(), t);
  if (pos != tickTimes.end() && *pos == t) return;  // a duplicate tick
  seeTime(t);
  int64_t prevTick = pos == tickTimes.begin() ? INT64_MIN : *(pos - 1);
  bool late = pos != tickTimes.end();
  size_t at = size_t(pos - tickTimes.begin());
  tickTimes.insert(pos, t);
  // Ticks further apart than asked (the budget's steps, a probe thread kept
  // off its CPU): every thread lost the ticks' detail in between.
  const int64_t asked = int64_t(std::min<uint64_t>(info.tickIntervalNs, INT64_MAX / 8));
  if (!late && prevTick != INT64_MIN && asked > 0 && (t - prevTick) * 4 >= asked * 7)
    addDetailLoss(&info.detailLost, {DetailLoss::SlowTicks, prevTick, t, t - prevTick});

  TickPoint pt;
  pt.t = t;
  double rqThreads = 0;
  for (size_t i = 0; i < tk.n_lwps; i++) {
    const Threadmon__LwpSample &s = *tk.lwps[i];
    ThreadTimeline *thp = threadFor(s.tid, t);
    if (!thp) continue;
    ThreadTimeline &th = *thp;
    LwpSeries::Values v{
#define TM_LWP_COUNTER(field, ...) s.field,
#include "counters.def"
    };
    const LwpExtraSeries::Values extra{
#define TM_LWP_EXTRA(field, ...) s.field,
#include "counters.def"
    };
    if (extra != LwpExtraSeries::Values{}) th.lwpExtra.add(t, 0, extra);
    const LwpSeries::Point *prev = th.lwp.at(t);
    const int64_t read = s.read_ns ? ns(s.read_ns) : t;
    // A first reading with more CPU and run-queue time than the thread has
    // lived since its start: it ran before (a main thread before an exec,
    // the fork child's time; a thread an attach found): from this reading.
    if (!th.lwp.size() && th.countersZeroNs() != INT64_MIN) {
      if (int64_t(s.oncpu_ns + s.runqueue_ns) > read - th.countersZeroNs() + kFirstReadSlackNs) {
        th.baselineZero = false;
        th.carriedZeroNs = INT64_MIN;
        th.countedFromFirstSample = true;
      }
    }
    if (!th.lwp.size() && th.countedFromFirstSample) th.waitBefore.sampleNs = t;
    dropWaitBeforeBaseline(&th, prev, t, read, &v);
    // A thread is only sampled when its counters moved: its run-queue time
    // accrued since its own previous sample (or its start), not this tick.
    // A first reading not counted from zero (an attach's, a window's model
    // started mid-run) holds a life's run-queue time: none of it is this
    // tick's. A segment's model knows the zero its thread's start had in
    // the segment before (carryZeroReading).
    int64_t since = prev ? prev->t : th.countersZeroNs();
    if (since != INT64_MIN && t > since)
      rqThreads += double(sub(v[kRunqueue], prev ? prev->v[kRunqueue] : 0)) / double(t - since);
    activity.futex(s.tid, t, s.futex_addr, s.asleep_syscall, s.asleep_kind);
    if (s.kstate == 'R') pt.threadsInR++;
    maxCpuSeen_ = std::max(maxCpuSeen_, s.cpu);
    if (s.n_folded_ns || s.folded_changes) noteFolds(th.info, t, s.n_folded_ns, s.folded_ns, s.folded_changes);
    int64_t prevSample = prev ? prev->t : INT64_MIN;  // prev dies with the add
    if (th.lwp.add(t, lwpAux(s.cpu, s.kstate, s.asleep_syscall, s.asleep_kind), v, lwpExtra(t, ns(s.read_ns))))
      th.sampleAdded(prevTick, prevSample);
  }
  pt.runqueueThreads = float(rqThreads);

  // /proc/stat may come only every few ticks: busy shares are computed over
  // the window asked for (SessionModel::cpuBusyShare), not per tick.
  for (size_t i = 0; i < tk.n_cpus; i++) {
    const Threadmon__CpuSample &c = *tk.cpus[i];
    if (cpus.size() <= c.cpu) cpus.resize(c.cpu + 1);
    const CpuSeries::Values v{
#define TM_CPU_COUNTER(field, ...) c.field,
#include "counters.def"
    };
    cpus[c.cpu].add(t, 0, v);
  }

  for (size_t i = 0; i < tk.n_sites; i++) {
    const Threadmon__SiteStats &st = *tk.sites[i];
    if (!activity.site(t, st.object_id, st.stack_id, st.contentions, st.wait_ns))
      check_.note(FrameCheck::StacksFull);
    // A futex word's waiters' stacks say whether a runtime made it.
    auto obj = syncIndex.find(st.object_id);
    if (obj != syncIndex.end())
      classifyRuntime(sync[size_t(obj->second)].info, activity.stackFrames(st.stack_id));
  }
  for (size_t i = 0; i < tk.n_sync; i++) {
    const Threadmon__SyncStats &s = *tk.sync[i];
    SyncEntry *ep = syncFor(s.id);
    if (!ep) continue;
    SyncEntry &e = *ep;
    const SyncSeries::Values v{
#define TM_SYNC_COUNTER(field, ...) s.field,
#include "counters.def"
    };
    const SyncSeries::Point *prev = e.series.at(t);
    pt.contentions += uint32_t(sub(s.contentions, prev ? prev->v[kCont] : 0));
    pt.waitNs += sub(s.wait_ns, prev ? prev->v[kWait] : 0);
    e.series.add(t, 0, v);
  }
  if (tk.probe) {
    info.framesDropped = std::max(info.framesDropped, tk.probe->frames_dropped);
    info.eventsDropped = std::max(info.eventsDropped, tk.probe->events_dropped);
    info.eventsFolded = std::max(info.eventsFolded, tk.probe->events_folded);
  }
  points.insert(points.begin() + std::ptrdiff_t(at), pt);
  // A tick inside settled time moves a tick boundary for every thread.
  if (late && prevTick != INT64_MIN)
    for (auto &th : threads) th->markDirty(prevTick);
  if (!late && activity.checkDeadlocks(t)) deadlockFormed = true;
}

void SessionStore::applyThreadStart(const Threadmon__ThreadStart &s) {
  int64_t t = ns(s.time_ns);
  const int index = tidIndex.find(s.tid);
  if (index >= 0) {
    const ThreadInfo &old = threads[size_t(index)]->info;
    if (old.endNs >= 0 && t >= old.endNs) {  // the kernel reused the tid: a new thread
      if (threads.size() >= limits::kMaxThreads) {
        check_.note(FrameCheck::ThreadsFull);
        return;
      }
      tidIndex.erase(s.tid);
      FoldSlot &slot = foldSlots_[s.tid % kFoldSlots];
      if (slot.tid == s.tid) slot.timeline = nullptr;  // the next record finds the new one
    }
  }
  ThreadTimeline *thp = threadFor(s.tid, t);
  if (!thp) return;
  ThreadTimeline &th = *thp;
  // Attached to, the sampler describes the threads it finds at its first
  // tick as starting then; they were born before, their counters not 0.
  // That tick may take long in a loaded process; a window's model is given
  // the descriptions before any tick: within a second of the start.
  const bool before =
      tickTimes.empty() ? t <= info.startNs + kFirstTickWithinNs : t <= tickTimes.front();
  th.countedFromFirstSample = info.hasSource(THREADMON__SOURCE__SOURCE_ATTACH) && before;
  th.baselineZero = !th.countedFromFirstSample;
  th.setStart(t);
  th.info.creatorTid = s.creator_tid;
  if (s.name && *s.name) th.info.name = str(s.name);
  if (s.start_routine && *s.start_routine) th.info.startRoutine = readableFrame(str(s.start_routine));
  th.info.probe = th.info.probe || s.is_probe;
  th.info.main = th.info.main || s.is_main;
}

void SessionStore::applyThreadEnd(const Threadmon__ThreadEnd &e) {
  int64_t t = ns(e.time_ns);
  ThreadTimeline *thp = threadFor(e.tid, t);
  if (!thp) return;
  ThreadTimeline &th = *thp;
  if (th.info.endNs < 0 || t < th.info.endNs) th.info.endNs = t;
  if (e.n_folded_ns || e.folded_changes) noteFolds(th.info, t, e.n_folded_ns, e.folded_ns, e.folded_changes);
  // Its sched_yield calls after its last reading (the sampler's reads of
  // them end with it): the rarely-moving counters' last values with those.
  const LwpExtraSeries::Point *lastExtra = th.lwpExtra.at(t);
  if (e.yields > (lastExtra ? lastExtra->v[kYields] : 0)) {
    LwpExtraSeries::Values extra = lastExtra ? lastExtra->v : LwpExtraSeries::Values{};
    extra[kYields] = e.yields;
    th.lwpExtra.add(t, 0, extra);
  }
  // The thread's own CPU clock at its end closes its last sample span (no
  // sample can follow once it is gone): a sample at the end with that clock
  // and the other counters as last read.
  const LwpSeries::Point *last = th.lwp.at(t);
  if (e.oncpu_ns && last && last->t < t && e.oncpu_ns >= last->v[kOncpu]) {
    LwpSeries::Values v = last->v;
    v[kOncpu] = e.oncpu_ns;
    int64_t prevSample = last->t;
    auto pos = std::lower_bound(tickTimes.begin(), tickTimes.end(), t);
    int64_t prevTick = pos == tickTimes.begin() ? INT64_MIN : *(pos - 1);
    if (th.lwp.add(t, last->aux, v, lwpExtra(t, t))) th.sampleAdded(prevTick, prevSample);
  }
  th.markDirty(t);
  activity.threadEnded(e.tid, t);
}

void SessionStore::classifyRuntime(SyncObjectInfo &i, const QStringList &frames) {
  // A word a runtime waits on through syscall() (libstdc++'s atomic waits,
  // Rust's std) stays KIND_FUTEX (its waits are exact) and acts as what the
  // runtime made of it: its waiters' state is that kind's (futexWaitState).
  if ((i.kind != THREADMON__SYNC_KIND__KIND_INTERNAL && i.kind != THREADMON__SYNC_KIND__KIND_FUTEX) ||
      i.runtimeKind)
    return;
  RuntimeSync rs = runtimeSyncOf(frames);
  i.runtimeKind = rs.kind;
  i.runtimeWhat = rs.what;
}

void SessionStore::applyStack(const Threadmon__Stack &s) {
  QStringList frames;
  for (size_t i = 0; i < s.n_frames; i++)
    frames.append(shownFrame(s.frames[i], i < s.n_locations ? s.locations[i] : nullptr));
  if (!activity.stack(s.id, std::move(frames))) check_.note(FrameCheck::StacksFull);
}

void SessionStore::applyThreadAttr(const Threadmon__ThreadAttr &a) {
  ThreadTimeline *th = threadFor(a.tid, ns(a.time_ns));
  if (!th) return;
  ThreadInfo &i = th->info;
  std::vector<uint64_t> affinity(a.affinity, a.affinity + std::min<size_t>(a.n_affinity, 16));
  QString name = a.name && *a.name ? str(a.name) : i.name;
  // Neither the attributes it started with (sent at its start time) nor a
  // repeat (descriptions sent again after a capture gap or to a new
  // display) is a change the program made.
  bool changed = name != i.name || a.policy != i.policy || a.priority != i.priority ||
                 a.nice != i.nice || affinity != i.affinity;
  if (changed && ns(a.time_ns) > i.startNs) i.attrChanges++;
  i.name = name;
  i.policy = a.policy;
  i.priority = a.priority;
  i.nice = a.nice;
  i.affinity = std::move(affinity);
}

namespace {

// The member of its global a futex word or a lock at an offset in one is
// (".users.lock"), by the module's debug information: a lock at a global's
// start is the global itself unless it is a futex word (a struct's first
// member). A library's hidden locks keep their symbol. The module's file
// and build-id from a location in the same module the object carries (its
// own module is a base name), as the one of its call sites there.
QString globalMember(const SyncObjectInfo &i, const Threadmon__SyncObject &o) {
  const bool futex = i.kind == THREADMON__SYNC_KIND__KIND_FUTEX;
  if (i.kind == THREADMON__SYNC_KIND__KIND_INTERNAL || (!futex && !i.symbolOffset) ||
      i.module.isEmpty())
    return QString();
  CodeLocation module;
  auto sameModule = [&](const Threadmon__CodeLocation *l) {
    if (!module.modulePath.isEmpty() || !l || !l->module_path || !*l->module_path) return;
    const QString path = QString::fromUtf8(l->module_path);
    if (path == i.module || path.endsWith(u'/' + i.module)) module = codeLocationOf(*l);
  };
  sameModule(o.made_at_location);
  for (size_t k = 0; k < o.n_first_contention_locations; k++)
    sameModule(o.first_contention_locations[k]);
  return sourceGlobalMember(module, i.symbolRaw, i.symbolOffset, cTypeName(i.kind), i.symbolFile);
}

}  // namespace

void SessionStore::applySyncObject(const Threadmon__SyncObject &o) {
  SyncEntry *e = syncFor(o.id);
  if (!e) return;
  SyncObjectInfo &i = e->info;
  if (o.kind) i.kind = o.kind;
  if (o.address) i.address = o.address;
  if (o.module && *o.module) i.module = str(o.module);
  if (o.symbol && *o.symbol) {
    SymbolParts p = splitSymbol(str(o.symbol));
    i.symbol = p.name;
    i.symbolRaw = p.raw;
    i.symbolOffset = p.offset;
    i.symbolFile = p.file;
  }
  if (o.first_seen_ns) i.firstSeenNs = ns(o.first_seen_ns);
  if (o.n_first_contention_stack) {
    i.firstContentionStack.clear();
    for (size_t k = 0; k < o.n_first_contention_stack; k++)
      i.firstContentionStack.append(shownFrame(
          o.first_contention_stack[k],
          k < o.n_first_contention_locations ? o.first_contention_locations[k] : nullptr));
    classifyRuntime(i, i.firstContentionStack);
  }
  if (o.flags) i.flags = o.flags;
  if (i.symbolMember.isEmpty() && !i.symbol.isEmpty()) i.symbolMember = globalMember(i, o);
  if (o.made_at && *o.made_at) {
    i.madeAt = shownFrame(o.made_at, o.made_at_location);
    if (o.made_at_location)
      i.madeMember = sourceMember(codeLocationOf(*o.made_at_location), cTypeName(i.kind));
  }
}

int SessionStore::futexWaitState(uint32_t object) const {
  auto it = syncIndex.find(object);
  const int runtime = it == syncIndex.end() ? 0 : sync[size_t(it->second)].info.runtimeKind;
  const int wire = blockedWireOfKind(runtime);
  return wire ? wire : THREADMON__THREAD_STATE__STATE_BLOCKED_FUTEX;
}

void SessionStore::foldTransition(int64_t at, int state, uint32_t obj, uint32_t holder,
                                  uint32_t releaser, uint32_t tid) {
  FoldSlot *slot = &foldSlots_[tid % kFoldSlots];
  if (slot->tid != tid || !slot->timeline) {
    if (!(slot = foldSlotFor(tid, at))) {
      batchDropped_ = true;
      return;
    }
  }
  ThreadTimeline &th = *slot->timeline;
  if (!th.baselineZero && at < th.info.startNs) th.setStart(at);  // first sight was late
  if (state == THREADMON__THREAD_STATE__STATE_BLOCKED_FUTEX && obj) state = futexWaitState(obj);
  // A duplicate (a frame sent twice) would close the wait it opened as a
  // zero-length one: the waits see only what the timeline took.
  ThreadTimeline::Added added = th.addTransition(at, state, obj);
  if (added != ThreadTimeline::Added::Yes) {
    rejected(th, added, at);
    if (added == ThreadTimeline::Added::Duplicate || added == ThreadTimeline::Added::Crowded)
      return;
  }
  if (state == THREADMON__THREAD_STATE__STATE_UNKNOWN) th.info.eventGaps.push_back(at);
  // The thread's place among the waits, found once (the first time a
  // transition of it reaches them, as before).
  if (slot->waitSlot < 0) slot->waitSlot = int(activity.slotOf(tid));
  activity.transitionAt(size_t(slot->waitSlot), at, state, obj, holder, releaser);
  if (state == THREADMON__THREAD_STATE__STATE_EXITED && (th.info.endNs < 0 || at < th.info.endNs)) {
    th.info.endNs = at;
    th.markDirty(at);
  }
}

void SessionStore::applyTransitions(const Threadmon__Transitions &tr) {
  const size_t n = std::min(tr.n_tid, tr.n_delta_ns);
  int64_t t = ns(tr.base_ns);
  // A thread's first record is seen by newThread; the others' times are
  // seen once, after the loop (seeTime for every record wrote both members
  // each time, and a min and max per record were 9 instructions of it):
  // nothing below reads them.
  batchDropped_ = false;
  // Nearly every batch has all its columns whole: read without a bound per
  // column and entry (those were a tenth of the fold's own instructions).
  if (tr.n_state >= n && tr.n_object_id >= n && tr.n_holder_tid >= n && tr.n_releaser_tid >= n) {
    // States foldTransition treats apart: a futex wait's kind, an UNKNOWN's
    // gap, a thread's end, a wrapped sleep.
    constexpr uint32_t kApart = 1u << THREADMON__THREAD_STATE__STATE_BLOCKED_FUTEX |
                                1u << THREADMON__THREAD_STATE__STATE_UNKNOWN |
                                1u << THREADMON__THREAD_STATE__STATE_EXITED |
                                1u << THREADMON__THREAD_STATE__STATE_SLEEPING;
    static_assert(kWireStates <= 32, "a state's bit in kApart");
    for (size_t i = 0; i < n; i++) {
      t += tr.delta_ns[i];
      const uint32_t tid = tr.tid[i];
      const int state = tr.state[i];
      const uint32_t obj = tr.object_id[i];
      // A plain transition (nearly all) is folded here, with no call
      // before its wait's close (SyncActivity::plainAt); any other by
      // foldTransition, the same way as before.
      const FoldSlot &slot = foldSlots_[tid % kFoldSlots];
      ThreadTimeline *const th = slot.timeline;
      if (slot.tid == tid && th && unsigned(state) < unsigned(kWireStates) &&
          !(kApart >> state & 1) && (th->baselineZero || t >= th->info.startNs) &&
          th->appendsPlainly(t) && slot.waitSlot >= 0) {
        const int waitCode = SyncActivity::waitCodeOf(state, obj);
        if (auto *waits = activity.plainAt(size_t(slot.waitSlot), t, waitCode)) {
          th->appendPlain(t, state, obj);
          activity.foldPlain(waits, t, waitCode, obj, tr.holder_tid[i], tr.releaser_tid[i]);
          continue;
        }
      }
      foldTransition(t, state, obj, tr.holder_tid[i], tr.releaser_tid[i], tid);
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      t += tr.delta_ns[i];
      foldTransition(t, i < tr.n_state ? tr.state[i] : THREADMON__THREAD_STATE__STATE_UNKNOWN,
                     i < tr.n_object_id ? tr.object_id[i] : 0,
                     i < tr.n_holder_tid ? tr.holder_tid[i] : 0,
                     i < tr.n_releaser_tid ? tr.releaser_tid[i] : 0, tr.tid[i]);
    }
  }
  seeBatchTimes(tr, n, t, batchDropped_);
}

void SessionStore::seeBatchTimes(const Threadmon__Transitions &tr, size_t n, int64_t lastNs,
                                 bool dropped) {
  if (!n) return;
  // Nearly always in time order (no delta after the first is negative:
  // FrameCheck made the first 0) and every record of a thread: the first
  // and the last are the earliest and the latest.
  const uint64_t negative = bitsOfAny(tr.delta_ns + 1, n - 1);
  if (!dropped && !(negative >> 63)) {
    seeTime(ns(tr.base_ns) + tr.delta_ns[0]);
    seeTime(lastNs);
    return;
  }
  // The records seen are those of a thread now (threads only come here).
  int64_t t = ns(tr.base_ns), first = INT64_MAX, last = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    t += tr.delta_ns[i];
    if (dropped && tidIndex.find(tr.tid[i]) < 0) continue;
    first = std::min(first, t);
    last = std::max(last, t);
  }
  if (first <= last) {
    seeTime(first);
    seeTime(last);
  }
}

void SessionStore::countSwitchesIn(int64_t from, int64_t to) {
  switchCountFrom_ = from;
  switchCountTo_ = to;
}

void SessionStore::applySwitches(const Threadmon__CpuSwitches &sw) {
  size_t n = std::min({sw.n_tid, sw.n_delta_ns, sw.n_cpu});
  if (ns(sw.base_ns) >= switchCountFrom_ && ns(sw.base_ns) < switchCountTo_) {
    info.switchesLost += sw.lost;
    info.switchesReceived += n;
  }
  // A switch of any thread may be missing: none of their records is
  // trusted from where the loss began (the probe reads every thread's state
  // in full meanwhile).
  if (sw.lost) addSwitchGapsAfterEachCpu(lastSwitchNs_ != INT64_MIN ? lastSwitchNs_ : startNs());
  if (n) std::fill(batchNewestByCpu_.begin(), batchNewestByCpu_.end(), INT64_MIN);
  int64_t t = ns(sw.base_ns);
  if (n && (info.firstSwitchNs < 0 || t + sw.delta_ns[0] < info.firstSwitchNs))
    info.firstSwitchNs = t + sw.delta_ns[0];
  // Records again after a pause: the pause ends at the first of them.
  if (n && pausedSince_ != INT64_MIN) {
    for (DetailLoss &d : info.detailLost)
      if (d.what == DetailLoss::RecordsPaused && d.toNs < 0)
        d.toNs = std::max(d.fromNs, t + sw.delta_ns[0]);
    pausedSince_ = INT64_MIN;
  }
  for (size_t i = 0; i < n; i++) {
    t += sw.delta_ns[i];
    lastSwitchNs_ = std::max(lastSwitchNs_, t);
    const size_t c = std::min<size_t>(sw.cpu[i], limits::kMaxCpus);  // all unknown ones as one
    if (c >= batchNewestByCpu_.size()) batchNewestByCpu_.resize(c + 1, INT64_MIN);
    batchNewestByCpu_[c] = std::max(batchNewestByCpu_[c], t);
    int kind = i < sw.n_kind ? sw.kind[i] : THREADMON__SWITCH_KIND__SWITCH_IN;
    if (sw.cpu[i] < uint32_t(limits::kMaxCpus))
      maxCpuSeen_ = std::max(maxCpuSeen_, int(sw.cpu[i]));
    ThreadTimeline *th = threadFor(sw.tid[i], t);
    if (th) rejected(*th, th->addSwitch(t, kind, sw.cpu[i]), t);
  }
  // The probe paused its records (too many switches): no thread has a
  // record after its last one here until they resume, each from its next.
  if (sw.stopped) {
    const int64_t at = lastSwitchNs_ != INT64_MIN ? lastSwitchNs_ : ns(sw.base_ns);
    if (info.switchesStoppedNs < 0) info.switchesStoppedNs = at;
    if (pausedSince_ == INT64_MIN) {
      pausedSince_ = at;
      addDetailLoss(&info.detailLost, {DetailLoss::RecordsPaused, at, -1, 0});
    }
    // A ring full at this last read lost what followed, and no batch will
    // say so: from each CPU's newest record here, as for a loss.
    addSwitchGapsAfterEachCpu(at);
  }
}

void SessionStore::addSwitchGapsAfterEachCpu(int64_t newest) {
  // A CPU's ring loses records once full, until the probe's read empties
  // it; the kernel reports the loss with its next record, in the read after.
  // So the loss began right after the newest record the batch before had of
  // that CPU, which the report does not name: a gap after each CPU's. Only
  // after the newest of all CPUs', a thread whose ring filled 107 ms before
  // another CPU's last record kept its last switch-in up to there, and read
  // 41% stolen (its switch-out among the records lost).
  std::vector<int64_t> from;
  for (int64_t t : batchNewestByCpu_)
    if (t != INT64_MIN) from.push_back(t);
  from.push_back(newest);  // no batch before, or frames lost from the file
  std::sort(from.begin(), from.end());
  from.erase(std::unique(from.begin(), from.end()), from.end());
  for (auto &th : threads)
    for (int64_t t : from) th->addSwitchGap(t);
}

int64_t SessionStore::horizon() const {
  if (info.ended) return info.endNs;
  return tickTimes.empty() ? INT64_MIN : tickTimes.back();
}

int64_t SessionStore::startNs() const {
  if (info.startNs) return info.startNs;
  return earliest_ == INT64_MAX ? 0 : earliest_;
}

void SessionStore::settle(int workers) {
  if (!unsettled_) return;
  int64_t h = horizon();
  if (h == INT64_MIN) return;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < threads.size();)
      threads[i]->settle(tickTimes, h);
  };
  // A thread of its own pays only for a few timelines each.
  constexpr size_t kTimelinesPerWorker = 8;
  std::vector<std::thread> others;
  for (int k = 1; k < workers && size_t(k + 1) * kTimelinesPerWorker <= threads.size(); k++)
    others.emplace_back(work);
  work();
  for (std::thread &t : others) t.join();
  unsettled_ = false;
}

int SessionStore::cpuCount() const {
  return std::max({int(info.cpuCount), int(cpus.size()), maxCpuSeen_ + 1});
}

size_t SessionStore::bytes() const {
  size_t b = sizeof(*this) + tickTimes.capacity() * sizeof(int64_t) +
             points.capacity() * sizeof(TickPoint) + sync.capacity() * sizeof(SyncEntry);
  for (const auto &th : threads) b += th->bytes();
  for (const auto &c : cpus) b += c.bytes();
  for (const auto &s : sync) b += s.series.bytes();
  b += activity.bytes();
  b += users.bytes();
  return b;
}

}  // namespace tmon
