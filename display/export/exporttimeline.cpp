#include "exporttimeline.h"

#include <QFileInfo>
#include <algorithm>
#include <cstring>

#include "findings_util.h"

using tmon::findings_detail::objectName;
#include "sessionmodel.h"
#include "syncactivity.h"
#include "threadtimeline.h"
#include "waitorder.h"

namespace tmon {

const char *TimelineSink::counterName(int c) {
  switch (c) {
    case kRunqueue: return "threads waiting for a CPU";
    case kContentions: return "contentions per tick";
    case kWaitMs: return "ms waiting on locks per tick";
  }
  return "";
}

void TimelineSink::window(const SessionModel &m, const TimeRange &span, bool first, bool last) {
  if (first && !started_) {
    started_ = true;
    origin_ = m.startNs();
    pid_ = m.info().pid;
    process(m.info(), m.cpuCount());
  }
  for (int i = 0; i < m.threadCount(); i++) {
    const ThreadInfo &ti = m.thread(i);
    if (!threadsSeen_.insert(ti.tid).second) continue;
    ExportThread t;
    t.tid = ti.tid;
    t.name = ti.name.isEmpty() && ti.main ? QFileInfo(m.info().exe).fileName() : ti.name;
    if (t.name.isEmpty()) t.name = QStringLiteral("thread %1").arg(ti.tid);
    t.startRoutine = ti.startRoutine;
    t.main = ti.main;
    t.probe = ti.probe || (m.info().probeTid && ti.tid == m.info().probeTid);
    thread(t);
  }
  // States: runs that reach the window's end wait for the next window.
  const TickTimes &tickTimes = m.tickTimes();
  // (One function per thread and per object: each walk's callback inlined
  // in it, which one function for all of them did not.)
  for (int i = 0; i < m.threadCount(); i++) threadStates(m, i, span, tickTimes, first, last);
  // Waits, in start order per object; one cut by the window's end is held
  // until the next window says how it ends.
  waits_.clear();  // keeps its capacity, window to window
  // Waits this window holds, kept apart until every object is read: a
  // waiter's wait cut by this window's end, on an object read before the
  // one that goes on with the wait held from the window before, replaced
  // that held wait, which then started at the edge (half.tmcap: a wait of
  // 769.7 us at 10 s exported as 329.6 us).
  std::vector<ExportWait> held;
  for (int k = 0; k < m.syncObjectCount(); k++) objectWaits(m, m.syncObject(k), span, last, &held);
  // A held wait the next window did not continue ended at the edge.
  for (auto it = pendingWait_.begin(); it != pendingWait_.end();) {
    if (it->second.end < span.t0 || last) {
      waits_.addOther(it->second);
      it = pendingWait_.erase(it);
    } else {
      ++it;
    }
  }
  // Those the window before kept back (see below).
  for (const ExportWait &w : deferred_) waits_.addOther(w);
  deferred_.clear();
  for (const ExportWait &w : held) {
    // A waiter in a new wait left the one held before it.
    auto [it, made] = pendingWait_.try_emplace(w.waiter, w);
    if (!made) {
      waits_.addOther(it->second);
      it->second = w;
    }
  }
  // Given by their starts, then by waiter, object and end: in an order of
  // their own, not the one read (a window's is not the whole read's: two
  // waits starting in the same nanosecond swapped their wake-up flows' ids
  // between the two).
  const auto before = [](const ExportWait &x, const ExportWait &y) {
    return compareWaits(x, y) < 0;
  };
  // The formats number the wake-up flows in this order: the waits after
  // the first one held (which the next window gives, in the whole read's
  // order before them) wait for the next window, so that the numbers are
  // the whole read's. Only a wait held since this window began: one
  // longer than a window would keep back every wait after it (its flow's
  // number, and those of the waits of its window after it, differ from the
  // whole read's: docs/architecture.md, "Window edges"), unless it began in
  // the model this window reads (the windows of a segment: what is kept
  // back is at most a segment's waits, as the model holds them).
  const int64_t heldSince = std::min(span.t0, segmentFrom_);
  const ExportWait *cut = nullptr;
  for (const auto &[tid, w] : pendingWait_)
    if (w.start >= heldSince && (!cut || before(w, *cut))) cut = &w;
  // (In order: those before the cut come first.)
  waits_.inOrder(
      cut, [this](const ExportWait *batch, size_t n) { waitsInOrder(batch, n); }, &deferred_);

  flushSpans(m, span, last);

  // Counters per tick: each CPU's busy share over the tick, and the
  // probe's own figures.
  const std::vector<TickPoint> ticks = m.ticks(span);
  int64_t prev = lastCpuTick_ > INT64_MIN ? lastCpuTick_ : span.t0;
  for (const TickPoint &p : ticks) {
    if (p.t <= prev) continue;
    for (int c = 0; c < m.cpuCount(); c++) {
      const CpuDelta d = m.cpuDelta(c, TimeRange{prev, p.t});
      if (d.total() == 0) continue;
      cpuBusy(c, p.t, 100.0 * double(d.total() - d.idle - d.iowait) / double(d.total()));
    }
    counter(kRunqueue, p.t, p.runqueueThreads);
    counter(kContentions, p.t, p.contentions);
    counter(kWaitMs, p.t, double(p.waitNs) / 1e6);
    prev = p.t;
  }
  lastCpuTick_ = prev;
  if (!last) return;
  for (int i = 0; i < m.threadCount(); i++)
    if (m.thread(i).endNs >= 0 && m.thread(i).endNs <= span.t1) threadEnd(m.thread(i).tid, m.thread(i).endNs);
  end();
}

void TimelineSink::threadStates(const SessionModel &m, int i, const TimeRange &span,
                                const TickTimes &tickTimes, bool first, bool last) {
  const uint32_t tid = m.thread(i).tid;
  // A thread blocked in a wrapped call since before this window's
  // warm-up has no transition here until it unblocks: the window shows
  // the kernel's view (asleep) until then. Its blocked state carries on
  // over that head (as StreamedReport carries it).
  // The run not closed yet (from the last window), looked up once per
  // thread: two lookups per interval were a tenth of the walk's own time.
  auto held = pending_.find(tid);
  bool have = held != pending_.end();
  StateInterval run = have ? held->second : StateInterval{};
  // (Carried over the head: cleared at its first piece not asleep.)
  bool carry = !first && have && isBlockedState(run.state) && run.end == span.t0;
  // The window's pieces (read in place, not copied out first), carried
  // and merged into runs as they come, each run written once.
  intervals_.clear();
  const auto add = [this](const StateInterval &iv) __attribute__((always_inline)) {
    // (sameRun, its state first: the one that differs nearly always.)
    if (!intervals_.empty()) {
      StateInterval &back = intervals_.back();
      if (iv.state == back.state && iv.object == back.object && iv.cpu == back.cpu &&
          back.end == iv.start) {
        back.end = iv.end;
        return;
      }
    }
    intervals_.push_back(iv);
  };
  const ThreadTimeline &timeline = m.settledTimeline(i);
  if (carry) {
    timeline.forEachPiece(span, tickTimes, [&](const StateInterval &piece) {
      StateInterval iv = piece;
      // (Stored only when it ends: carry lives in memory, f's closure
      // being shared with forEachPiece's out-of-line clipped pieces.)
      if (carry) {
        carry = iv.state == FinalState::Sleeping;
        if (carry) {
          iv.state = run.state;
          iv.object = run.object;
          iv.cpu = run.cpu;
        }
      }
      add(iv);
    });
  } else {
    // (Nearly every thread: no test of carry per piece.)
    timeline.forEachPiece(span, tickTimes, add);
  }
  StateInterval *v = intervals_.data();
  const size_t runs = intervals_.size();
  if (have && runs > 0) {
    if (sameRun(run, v[0]))
      v[0].start = run.start;
    else
      states(tid, &run, 1);
  }
  if (runs == 0 && !have) return;
  if (runs > 0) run = v[runs - 1];
  // The last run waits for the next window unless it ends in this one.
  const bool ends = run.end < span.t1 || last;
  const size_t closed = runs == 0 ? 0 : ends ? runs : runs - 1;
  if (closed > 0) states(tid, v, closed);
  if (runs == 0 && ends) states(tid, &run, 1);  // the one held from the last window
  if (ends) {
    if (held != pending_.end()) pending_.erase(held);
  } else if (held != pending_.end()) {
    held->second = run;
  } else {
    pending_.emplace(tid, run);
  }
}

void TimelineSink::objectWaits(const SessionModel &m, const SyncObjectInfo &o,
                               const TimeRange &span, bool last, std::vector<ExportWait> *held) {
  if (o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL) return;  // no timed waits
  const ExportObject *names = nullptr;
  // (In locals: the waits' stores may alias span and o, which were loaded
  // again.)
  const int64_t t0 = span.t0, t1 = span.t1;
  const uint32_t id = o.id;
  WindowWaits &waits = waits_;
  // Its names, made at its first wait.
  const auto named = [&] {
    if (__builtin_expect(names != nullptr, 1)) return;
    names = objectNamed(o.id, objectName(m, o.id), o.callSite());
    waits.beginRun(names);
  };
  // Inlined where the waits are read (a call per wait was a sixth of
  // their walk).
  const auto take =
      [&, t0, t1, id, last ](const WaitRecord &r, bool stored) __attribute__((always_inline)) {
    // The sums a live model keeps of waits it let go are no slices on a
    // timeline (their intervals went too: SessionModel::keepDetailFor).
    if (r.count != 1) return;
    named();
    // Nearly every one: after the window's start (only a wait that starts
    // there can continue one held from the last window) and ending in it.
    if (__builtin_expect(r.start > t0 && (r.end < t1 || last), 1)) {
      // Read in place, unless the model made it (clipped, or one of a few
      // of one start sorted in its scratch).
      if (__builtin_expect(stored && r.object == id, 1)) {
        waits.addSpan(&r, &r + 1);
      } else {
        WaitRecord c = r;
        c.object = id;
        waits.addCopy(c);
      }
      return;
    }
    ExportWait w;
    std::memcpy(static_cast<void *>(&w), &r, sizeof r);
    w.objectId = id;
    w.object = names;
    auto it = w.start <= t0 ? pendingWait_.find(w.waiter) : pendingWait_.end();
    if (it != pendingWait_.end() &&
        (it->second.object == names || it->second.object->name == names->name)) {
      w.start = it->second.start;
      if (!w.holder) w.holder = it->second.holder;
      pendingWait_.erase(it);
    }
    if (w.end >= t1 && !last)
      held->push_back(w);
    else
      waits.addOther(w);
  };
  // Those take() would keep in place, as spans of the model's records.
  const auto spans = [&](const WaitRecord *from, const WaitRecord *to)
      __attribute__((always_inline)) {
    named();
    waits.addSpan(from, to);
  };
  const TimeRange plain{t0, last ? INT64_MAX : t1};
  // Read in place (records_ only their scratch), or copied out when the
  // model let some go.
  if (!m.syncActivity().forEachWaitInOrder(o.id, span, m.latestNs(), &records_, take, plain,
                                           spans)) {
    m.waits(o.id, span, &records_);
    for (const WaitRecord &r : records_) take(r, false);
  }
  if (names) waits.endRun();
}

const ExportObject *TimelineSink::objectNamed(uint32_t id, QString name, QString callSite) {
  auto it = objectById_.find(id);
  if (it != objectById_.end() && it->second->name == name && it->second->callSite == callSite)
    return it->second;
  // New, or named otherwise in this window: a new one (waits held from
  // earlier windows keep theirs).
  ExportObject &o = objects_.emplace_back();
  o.id = id;
  o.index = uint32_t(objects_.size() - 1);
  o.nameUtf8 = name.toUtf8();
  o.callSiteUtf8 = callSite.toUtf8();
  o.name = std::move(name);
  o.callSite = std::move(callSite);
  objectById_[id] = &o;
  return &o;
}

void TimelineSink::flushSpans(const SessionModel &m, const TimeRange &span, bool last) {
  // Every user thread's spans on LWPs, in time order per LWP.
  std::vector<std::pair<uint32_t, PendingSpan>> spans;
  for (int u = 0; u < m.userThreadCount(); u++) {
    const QString name =
        QStringLiteral("%1 (user thread %2)").arg(userThreadName(m.userThread(u))).arg(m.userThread(u).id);
    for (const UserSpan &s : m.userThreadSpans(u, span))
      spans.push_back({s.tid, PendingSpan{name, s.start, s.end}});
  }
  std::sort(spans.begin(), spans.end(),
            [](const auto &a, const auto &b) { return a.second.start < b.second.start; });
  for (auto &[tid, s] : spans) {
    auto it = pendingSpan_.find(tid);
    if (it != pendingSpan_.end()) {
      if (it->second.name == s.name && it->second.end == s.start) {
        it->second.end = s.end;
        continue;
      }
      userSpan(tid, it->second.name, it->second.start, it->second.end);
      it->second = s;
    } else {
      pendingSpan_.emplace(tid, s);
    }
  }
  for (auto it = pendingSpan_.begin(); it != pendingSpan_.end();) {
    if (last || it->second.end < span.t1) {
      userSpan(it->first, it->second.name, it->second.start, it->second.end);
      it = pendingSpan_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tmon
