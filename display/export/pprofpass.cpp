#include "pprofpass.h"

#include <QFile>
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "framecheck.h"
#include "pprofexport.h"
#include "readahead.h"
#include "sessionmodel.h"
#include "tidindex.h"
#include "tmwire.h"

namespace tmon {

namespace {

int64_t ns(uint64_t v) {
  return v > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(v);
}

// One lock's waits by one waiter: their ns, and the first start (where the
// model's list of the lock's waits, in start order, first names him).
struct WaiterSum {
  int64_t ns = 0;
  int64_t firstStart = INT64_MAX;
};

// A thread as SyncActivity and ThreadTimeline see it.
struct Thread {
  uint32_t tid = 0;
  int64_t lastTransition = INT64_MIN;  // the timeline's newest
  int64_t lastT = INT64_MIN;           // SyncActivity's newest (transitions and its end)
  bool waiting = false;
  bool ended = false;
  int64_t openStart = 0;
  uint32_t openObject = 0;
  // Its sums by lock, found without hashing (a thread waits on few locks;
  // two lookups per wait were a third of the pass's own instructions).
  std::vector<std::pair<uint32_t, WaiterSum *>> sums;
};

constexpr size_t kSumsPerThread = 16;  // more locks: hashed

struct Site {
  uint32_t stack = 0;
  int64_t t = INT64_MIN;  // its newest tick
  uint64_t contentions = 0, waitNs = 0;
};

// A lock as SessionStore lists it (SyncObject frames and ticks' counters).
struct Lock {
  uint32_t id = 0;
  int64_t t = INT64_MIN;  // its counters' newest tick
  SyncDelta counters;
  bool counted = false;
};
using Waiters = std::unordered_map<uint32_t, WaiterSum>;

class Pass {
 public:
  bool run(const QString &path);
  bool give(PprofSink *sink);
  QString why;

 private:
  bool frame(Threadmon__Frame &f);
  bool transitions(const Threadmon__Transitions &tr);
  bool tick(const Threadmon__Tick &tk);
  Thread *thread(uint32_t tid, int64_t t);
  Lock *lock(uint32_t id);
  void transition(Thread &th, int64_t t, int state, uint32_t object);
  bool refuse(const char *what) {
    why = QString::fromLatin1(what);
    return false;
  }
  void see(int64_t t) { latest_ = std::max(latest_, t); }

  SessionModel names_;  // the descriptions only
  FrameCheck check_;
  std::vector<Thread> threads_;
  TidIndex tids_;
  std::vector<Lock> locks_;
  std::unordered_map<uint32_t, size_t> lockIndex_;
  // By object id, whether described or not (as SyncActivity keeps them).
  std::unordered_map<uint32_t, Waiters> waits_;
  std::unordered_map<uint32_t, std::vector<Site>> sitesOf_;  // in the order first seen
  std::unordered_map<uint32_t, bool> stacks_;
  size_t sites_ = 0;
  int64_t latest_ = INT64_MIN;
  int64_t lastTick_ = INT64_MIN, firstTick_ = INT64_MIN;
  bool ended_ = false;
  int64_t endNs_ = 0;
  int64_t firstWait_ = INT64_MAX, lastClosedStart_ = INT64_MIN, lastWaitEnd_ = INT64_MIN;
};

Thread *Pass::thread(uint32_t tid, int64_t t) {
  see(t);
  const int i = tids_.findAndRemember(tid);
  if (i >= 0) return &threads_[size_t(i)];
  if (threads_.size() >= limits::kMaxThreads) return nullptr;
  threads_.push_back(Thread{});
  threads_.back().tid = tid;
  tids_.insert(tid, int(threads_.size()) - 1);
  return &threads_.back();
}

Lock *Pass::lock(uint32_t id) {
  auto it = lockIndex_.find(id);
  if (it != lockIndex_.end()) return &locks_[it->second];
  if (locks_.size() >= limits::kMaxSyncObjects) return nullptr;
  lockIndex_.emplace(id, locks_.size());
  locks_.push_back(Lock{});
  locks_.back().id = id;
  return &locks_.back();
}

// SyncActivity::transition's waits, summed per lock and waiter.
void Pass::transition(Thread &th, int64_t t, int state, uint32_t object) {
  if (t < th.lastT) return;
  th.lastT = t;
  if (th.waiting) {
    th.waiting = false;
    lastClosedStart_ = std::max(lastClosedStart_, th.openStart);
    lastWaitEnd_ = std::max(lastWaitEnd_, t);
    WaiterSum *sum = nullptr;
    for (const auto &os : th.sums)
      if (os.first == th.openObject) {
        sum = os.second;
        break;
      }
    if (!sum) {
      sum = &waits_[th.openObject][th.tid];
      if (th.sums.size() < kSumsPerThread) th.sums.emplace_back(th.openObject, sum);
    }
    sum->ns += t - th.openStart;
    sum->firstStart = std::min(sum->firstStart, th.openStart);
  }
  FinalState fs;
  if (object && finalStateOfWire(state, &fs) && isBlockedState(fs)) {
    th.waiting = true;
    th.openStart = t;
    th.openObject = object;
    firstWait_ = std::min(firstWait_, t);
  }
}

bool Pass::transitions(const Threadmon__Transitions &tr) {
  const size_t n = std::min(tr.n_tid, tr.n_delta_ns);
  int64_t t = ns(tr.base_ns);
  for (size_t i = 0; i < n; i++) {
    t += tr.delta_ns[i];
    const int state = i < tr.n_state ? tr.state[i] : THREADMON__THREAD_STATE__STATE_UNKNOWN;
    const uint32_t object = i < tr.n_object_id ? tr.object_id[i] : 0;
    Thread *th = thread(tr.tid[i], t);
    if (!th) return refuse("more threads than the model keeps");
    // The model would place it among the thread's records, or drop it.
    if (t <= th->lastTransition) return refuse("a transition out of its thread's order");
    // Its state comes from the object's runtime, which its sites tell.
    if (state == THREADMON__THREAD_STATE__STATE_BLOCKED_FUTEX && object)
      return refuse("a wait on a futex word");
    th->lastTransition = t;
    if (state == THREADMON__THREAD_STATE__STATE_EXITED) th->ended = true;
    transition(*th, t, state, object);
  }
  return true;
}

bool Pass::tick(const Threadmon__Tick &tk) {
  const int64_t t = ns(tk.time_ns);
  if (t <= lastTick_) return refuse("a tick late or repeated");
  if (lastTick_ == INT64_MIN) firstTick_ = t;
  lastTick_ = t;
  see(t);
  for (size_t i = 0; i < tk.n_lwps; i++)
    if (!thread(tk.lwps[i]->tid, t)) return refuse("more threads than the model keeps");
  for (size_t i = 0; i < tk.n_sites; i++) {
    const Threadmon__SiteStats &st = *tk.sites[i];
    // SyncActivity::site: sites by object, each its stack's counters.
    auto obj = sitesOf_.find(st.object_id);
    if (obj == sitesOf_.end()) {
      if (sites_ >= limits::kMaxSites) return refuse("more call sites than the model keeps");
      obj = sitesOf_.emplace(st.object_id, std::vector<Site>()).first;
    }
    std::vector<Site> &v = obj->second;
    auto it =
        std::find_if(v.begin(), v.end(), [&](const Site &s) { return s.stack == st.stack_id; });
    if (it == v.end()) {
      if (sites_ >= limits::kMaxSites || v.size() >= limits::kMaxSitesPerObject)
        return refuse("more call sites than the model keeps");
      v.push_back(Site{st.stack_id, INT64_MIN, 0, 0});
      sites_++;
      it = v.end() - 1;
    }
    if (it->t == t) continue;  // a second one of this tick: the model keeps the first
    it->t = t;
    it->contentions = st.contentions;
    it->waitNs = st.wait_ns;
  }
  for (size_t i = 0; i < tk.n_sync; i++) {
    const Threadmon__SyncStats &s = *tk.sync[i];
    Lock *l = lock(s.id);
    if (!l) return refuse("more locks than the model keeps");
    if (l->t == t) continue;
    l->t = t;
    l->counted = true;
#define TM_SYNC_COUNTER(field, number, index, member, ...) l->counters.member = s.field;
#include "counters.def"
  }
  return true;
}

bool Pass::frame(Threadmon__Frame &f) {
  switch (f.body_case) {
    case THREADMON__FRAME__BODY_HELLO:
      if (f.hello && f.hello->start_monotonic_ns) see(ns(f.hello->start_monotonic_ns));
      names_.apply(f);
      if (names_.hasError()) return refuse("its Hello refused");
      break;
    case THREADMON__FRAME__BODY_GOODBYE:
      if (!f.goodbye) break;
      ended_ = true;
      if (f.goodbye->time_ns) see(ns(f.goodbye->time_ns));
      endNs_ = f.goodbye->time_ns ? ns(f.goodbye->time_ns) : latest_;
      break;
    case THREADMON__FRAME__BODY_TICK:
      if (f.tick && !tick(*f.tick)) return false;
      break;
    case THREADMON__FRAME__BODY_TRANSITIONS:
      if (f.transitions && !transitions(*f.transitions)) return false;
      break;
    case THREADMON__FRAME__BODY_SWITCHES:
      if (f.switches) {
        const Threadmon__CpuSwitches &sw = *f.switches;
        const size_t n = std::min({sw.n_tid, sw.n_delta_ns, sw.n_cpu});
        int64_t t = ns(sw.base_ns);
        for (size_t i = 0; i < n; i++)
          if (!thread(sw.tid[i], t += sw.delta_ns[i]))
            return refuse("more threads than the model keeps");
      }
      break;
    case THREADMON__FRAME__BODY_THREAD_START:
      if (f.thread_start) {
        Thread *th = thread(f.thread_start->tid, ns(f.thread_start->time_ns));
        if (!th) return refuse("more threads than the model keeps");
        if (th->ended) return refuse("a thread id used again");
        names_.apply(f);
      }
      break;
    case THREADMON__FRAME__BODY_THREAD_END:
      if (f.thread_end) {
        const int64_t t = ns(f.thread_end->time_ns);
        Thread *th = thread(f.thread_end->tid, t);
        if (!th) return refuse("more threads than the model keeps");
        th->ended = true;
        if (t >= th->lastT) transition(*th, t, THREADMON__THREAD_STATE__STATE_EXITED, 0);
      }
      break;
    case THREADMON__FRAME__BODY_THREAD_ATTR:
      if (f.thread_attr) {
        if (!thread(f.thread_attr->tid, ns(f.thread_attr->time_ns)))
          return refuse("more threads than the model keeps");
        names_.apply(f);
      }
      break;
    case THREADMON__FRAME__BODY_SYNC_OBJECT:
      if (f.sync_object) {
        if (!lock(f.sync_object->id)) return refuse("more locks than the model keeps");
        names_.apply(f);
      }
      break;
    case THREADMON__FRAME__BODY_STACK:
      if (f.stack) {
        stacks_[f.stack->id] = true;
        if (stacks_.size() >= limits::kMaxStacks)
          return refuse("more call stacks than the model keeps");
        names_.apply(f);
      }
      break;
    case THREADMON__FRAME__BODY_USER_THREAD:
      if (f.user_thread && f.user_thread->time_ns) see(int64_t(f.user_thread->time_ns));
      break;
    case THREADMON__FRAME__BODY_USER_SWITCHES:
      if (f.user_switches) {
        int64_t t = int64_t(f.user_switches->base_ns);
        for (size_t i = 0; i < f.user_switches->n_tid; i++) see(t += f.user_switches->delta_ns[i]);
      }
      break;
    case THREADMON__FRAME__BODY_NOTICE:
      names_.apply(f);
      break;
    default:
      break;
  }
  return true;
}

bool Pass::run(const QString &path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return refuse("not opened");
  tm_decoder dec;
  tm_decoder_init(&dec);
  bool ok = true, readError = false;
  {
    ReadAhead ahead(&dec, [&] {
      QByteArray b = file.read(1 << 20);
      if (b.isEmpty() && file.error() != QFileDevice::NoError) readError = true;
      return b;
    });
    for (bool last = false; !last;) {
      ReadAhead::Batch *b = ahead.take();
      for (size_t i = 0; ok && i < b->frames.size(); i++) {
        Threadmon__Frame &f = *b->frames[i].frame;
        const bool usable = check_.check(&f);
        if (check_.takeChanged()) ok = refuse("a frame the model would correct");
        if (ok && usable) ok = frame(f);
        check_.restore();
      }
      if (ok && !b->error.isEmpty()) ok = refuse("damaged");
      last = b->last;
      ahead.giveBack(b);
      if (!ok) break;
    }
    ahead.finish();
  }
  if (ok && (readError || !dec.header_done || tm_decoder_pending(&dec) > 0)) ok = refuse("damaged");
  tm_decoder_free(&dec);
  return ok;
}

// The figures PprofSink takes from a model read whole, over its whole run.
bool Pass::give(PprofSink *sink) {
  if (!names_.info().inputWarnings.isEmpty())
    return refuse("a description the model would correct");
  const int64_t start = names_.info().startNs;
  if (!start) return refuse("no start time");
  // SessionStore::horizon once the capture is read (markEnded).
  const int64_t end = std::max(ended_ ? endNs_ : std::max(latest_, lastTick_), start);
  // The counters' value at the start is 0 when no tick came before it.
  if (firstTick_ != INT64_MIN && firstTick_ <= start) return refuse("a tick before the start");
  if (lastTick_ > end) return refuse("a tick after the end");
  if (firstWait_ < start) return refuse("a wait before the start");
  if (lastClosedStart_ >= end || lastWaitEnd_ > end) return refuse("a wait past the end");
  for (const Lock &l : locks_) {
    const int i = names_.indexOfSyncObject(l.id);
    if (i < 0) return refuse("a lock counted but never described");
    const int kind = names_.syncObject(i).kind;
    if (kind == THREADMON__SYNC_KIND__KIND_INTERNAL || kind == THREADMON__SYNC_KIND__KIND_FUTEX)
      return refuse("a hidden lock or futex word");
  }
  // Waits still open at the end last until it (SyncActivity::forEachWait).
  for (Thread &th : threads_) {
    if (!th.waiting || th.openStart >= end) continue;
    WaiterSum &sum = waits_[th.openObject][th.tid];
    sum.ns += end - th.openStart;
    sum.firstStart = std::min(sum.firstStart, th.openStart);
  }

  sink->begin(names_, start);
  sink->setEnd(end);
  for (const Thread &th : threads_) sink->noteThread(names_, th.tid);
  for (const Lock &l : locks_)
    sink->noteLock(names_, names_.syncObject(names_.indexOfSyncObject(l.id)));
  for (const Lock &l : locks_) {
    const SyncObjectInfo &o = names_.syncObject(names_.indexOfSyncObject(l.id));
    // SyncActivity::callSites over the run: each site's counters at the end.
    std::vector<CallSite> sites;
    auto lockSites = sitesOf_.find(l.id);
    if (lockSites != sitesOf_.end())
      for (const Site &s : lockSites->second) {
        if (!s.contentions && !s.waitNs) continue;
        CallSite c;
        c.stackId = s.stack;
        c.frames = names_.stack(s.stack);
        c.contentions = s.contentions;
        c.waitNs = s.waitNs;
        sites.push_back(std::move(c));
      }
    std::stable_sort(sites.begin(), sites.end(), [](const CallSite &x, const CallSite &y) {
      return x.waitNs != y.waitNs ? x.waitNs > y.waitNs : x.contentions > y.contentions;
    });
    const SyncDelta d = l.counted ? syncBetween(SyncDelta{}, l.counters) : SyncDelta{};
    if (sink->profile() == PprofSink::Holds) {
      if (isHeldKind(o.kind)) sink->addHolds(names_, o, d, sites);
      continue;
    }
    // The model's waits come in start order (then by waiter): a waiter
    // enters its map at his first.
    std::vector<const std::pair<const uint32_t, WaiterSum> *> order;
    auto lockWaits = waits_.find(l.id);
    if (lockWaits != waits_.end())
      for (const auto &kv : lockWaits->second) order.push_back(&kv);
    std::sort(order.begin(), order.end(), [](const auto *a, const auto *b) {
      return a->second.firstStart != b->second.firstStart
                 ? a->second.firstStart < b->second.firstStart
                 : a->first < b->first;
    });
    std::unordered_map<uint32_t, double> waitedBy;
    for (const auto *w : order) waitedBy[w->first] += double(w->second.ns);
    sink->addWaits(names_, o, waitedBy, std::move(sites), &d);
  }
  return true;
}

}  // namespace

bool PprofPass::run(const QString &path, PprofSink *sink, QString *why, bool *written,
                    QString *writeError) {
  Pass p;
  if (!p.run(path) || !p.give(sink)) {
    *why = p.why;
    return false;
  }
  *written = sink->finish(writeError);
  return true;
}

}  // namespace tmon
