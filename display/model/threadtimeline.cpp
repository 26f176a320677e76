#include "threadtimeline.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "framecheck.h"
#include "intervalcode.h"
#include "nearend.h"
#include "threadmon.pb-c.h"
#include "wirestate.h"

namespace tmon {

using namespace intervalcode;

namespace {

constexpr int kNoCpu = ThreadTimeline::kNoCpuCode;
static_assert(kNoCpu == limits::kMaxCpus, "CPU numbers the wire may give, and one for none");
// A pseudo switch record: records were lost here, the kind is unknown (-1)
// until the thread's next real record.
constexpr uint8_t kSwitchGap = 0xFF;
int switchKind(uint8_t state) { return state == kSwitchGap ? -1 : int(state); }
constexpr int64_t kMaxRel = (int64_t(1) << 48) - 1;
// A difference between switch records and the CPU clock under 50 us, or
// under 1% of the sample span, is noise (records drained a little late).
constexpr int64_t kStealNoiseNs = 50'000;
constexpr int64_t kStealNoiseDiv = 100;  // 1% of the sample span
// Captures without LwpSample.read_ns read schedstat, whose run time of a
// thread on a CPU lags by up to a scheduler tick (4 ms at HZ=250); without
// this floor that lag would read as steal in half the spans.
constexpr int64_t kOldClockLagNs = 4'000'000;

// What a read found a thread doing off a CPU, outside wrapped calls: I/O
// wait, stopped, idle (asleep in a syscall that waits for work: poll,
// epoll, select, accept, a read of a socket or pipe), sleeping (in another
// syscall); -1 when it found it on a CPU or runnable, or asleep by its
// state letter but in no syscall by the syscall file (woken between the
// two reads, or inside a wrapped call then).
int offCpuCode(const LwpSeries::Point *p) {
  if (!p) return -1;
  const uint32_t kstate = lwpAuxKstate(p->aux);
  if (kstate == 'D') return int(FinalState::IoWait);
  if (kstate == 'T' || kstate == 't') return int(FinalState::Stopped);
  if (kstate != 'S') return -1;
  const int kind = lwpAuxAsleepKind(p->aux);
  if (kind < 0) return -1;
  const bool forWork = kind == THREADMON__ASLEEP_KIND__ASLEEP_IO_EVENTS ||
                       kind == THREADMON__ASLEEP_KIND__ASLEEP_READ;
  return forWork ? int(FinalState::Idle) : int(FinalState::Sleeping);
}

// Rest state of a tick's RUNNING time that is neither on a CPU nor
// runnable: what the tick's read (pb) found the thread asleep in. Each
// read is a sample of where its sleeps are (a read lands in a sleep in
// proportion to its length), so a tick whose read did not find it asleep
// in a syscall takes the read before it (pa): otherwise every such tick
// would read as sleeping, and an event loop that runs often would lose its
// idle time to sleep. Neither read says (on a busy machine an event loop's
// reads often find it on a CPU or queued for one): the last read that did,
// up to kSaidSpanNs before; none, the next read that does, up to
// kSaidSpanNs after (a new client's first 100-170 ms had no read that found
// it in its recv, and read as sleep: 3 points over its sleep in a 1.5 s
// run); none: sleeping.
constexpr int64_t kSaidSpanNs = 1'000'000'000;
// Each argument: offCpuCode of that read, -1 when it does not count.
unsigned restCode(int bCode, int aCode, int saidCode) {
  const int c = bCode >= 0 ? bCode : aCode >= 0 ? aCode : saidCode;
  return c < 0 ? unsigned(FinalState::Sleeping) : unsigned(c);
}

int blockedCode(int state) { return finalCodeOfWire(state); }

// What a segment of a tick without switch records becomes, by the wire
// state of its transition (a record's state byte), as the key of the
// interval it pushes (its bits, as ThreadTimeline::bitsOf gives them, over
// its payload) with its object masked out: blocked (the object, but for
// SLEEPING), RUNNING (kRunningKey: to be split by the tick), or nothing (0:
// EXITED, or a state no final state has). An interval's bits hold its
// start's below them, so no interval's key has those below-bits set.
constexpr uint32_t kRunningSegment = 1;  // below any interval's bits
constexpr uint64_t kRunningKey = uint64_t(kRunningSegment) << 32;
constexpr uint64_t kNoIntervalKey = uint64_t(3) << 32;  // a key no interval has
constexpr std::array<uint64_t, 256> segmentKeys() {
  std::array<uint64_t, 256> t{};
  for (size_t w = 0; w < t.size(); w++) {
    const int code = w < size_t(kWireStates) ? wirestate_detail::kFinalOfWire[w] : -1;
    if (code >= 0) {
      const uint64_t bits = uint32_t(code) << 16 | uint32_t(ThreadTimeline::kNoCpuCode) << 20;
      t[w] = bits << 32 | (w == THREADMON__THREAD_STATE__STATE_SLEEPING ? 0 : 0xFFFFFFFFu);
    } else if (w == THREADMON__THREAD_STATE__STATE_RUNNING ||
               w == THREADMON__THREAD_STATE__STATE_UNKNOWN) {
      t[w] = kRunningKey;
    }
  }
  return t;
}
constexpr std::array<uint64_t, 256> kSegmentKeys = segmentKeys();
static_assert(kSegmentKeys[THREADMON__THREAD_STATE__STATE_RUNNING] == kRunningKey &&
                  kSegmentKeys[THREADMON__THREAD_STATE__STATE_UNKNOWN] == kRunningKey,
              "RUNNING and UNKNOWN, and no other state, are running (isRunning in sweep)");
// 0 (nothing), kRunningSegment, or a blocked interval's bits.
constexpr uint32_t segmentBitsOf(uint64_t key) {
  return uint32_t(key >> 32);
}

// A rest state's bits in a mixed payload (restCodeOfMix reads them back).
uint32_t restBitsOf(unsigned rest) {
  return rest == unsigned(FinalState::IoWait)    ? 1
         : rest == unsigned(FinalState::Stopped) ? 2
         : rest == unsigned(FinalState::Idle)    ? kRestIdle
                                                 : 0;
}

// std::lround of x in [0, kFracOne], without the call: x - trunc(x) is
// exact there, so a half rounds up as lround rounds it.
uint32_t roundFrac(double x) {
  const auto t = uint32_t(x);
  return x - double(t) >= 0.5 ? t + 1 : t;
}

// A record's time, for the searches of nearend.h (a functor, so that it
// inlines: a function pointer there was a call per step).
struct TimeOf {
  template <typename Raw>
  int64_t operator()(const Raw &r) const {
    return r.t;
  }
  int64_t operator()(int64_t t) const { return t; }  // a tick
};

}  // namespace

uint32_t lwpAux(int cpu, uint32_t kstate, uint32_t asleepSyscall, int asleepKind) {
  uint32_t c = cpu < 0 || cpu >= 0xFFFF ? 0 : uint32_t(cpu) + 1;
  // 0: not seen asleep in a syscall; else its AsleepKind + 1.
  uint32_t k = 0;
  if (asleepSyscall) k = asleepKind > 0 && asleepKind < kAsleepKinds ? uint32_t(asleepKind) + 1 : 1;
  return c | (kstate & 0xFF) << 16 | k << 24;
}

// The read time is kept as an offset from the tick: it fits the padding of a
// point, and the sampler reads within milliseconds of its tick.
constexpr int32_t kNoReadNs = INT32_MIN;
int32_t lwpExtra(int64_t t, int64_t readNs) {
  if (readNs <= 0) return kNoReadNs;
  return int32_t(std::clamp<int64_t>(readNs - t, INT32_MIN + 1, INT32_MAX));
}
int64_t lwpReadNs(const LwpSeries::Point &p) { return lwpReadSent(p) ? p.t + p.extra : p.t; }
bool lwpReadSent(const LwpSeries::Point &p) { return p.extra != kNoReadNs; }

ThreadTimeline::ThreadTimeline(uint32_t tid, int64_t firstSeen, int64_t base) : base_(base) {
  info.tid = tid;
  info.startNs = firstSeen;
  lwp.thinOnlyBefore(INT64_MIN);  // until derived (settle)
}

// Duplicate when a record at t is the same, Crowded when t has too many
// (the scan for duplicates stays short whatever the input).
template <typename Same>
ThreadTimeline::Added ThreadTimeline::placeAt(const PodVector<Raw> &v, int64_t t, Same &&same,
                                              const Raw **at) {
  // In order (nearly always): appended without searching the whole thread's
  // history, whose binary search missed the cache at every step (a fifth of
  // a capture window's load).
  if (v.empty() || v.back().t < t) {
    *at = v.end();
    return Added::Yes;
  }
  auto it = upperBoundNearEnd(v.begin(), v.end(), t, TimeOf());
  int atInstant = 0;
  for (auto d = it; d != v.begin() && (d - 1)->t == t; --d) {
    if (same(*(d - 1))) return Added::Duplicate;
    if (++atInstant >= FrameCheck::kMaxSameInstant) return Added::Crowded;
  }
  *at = it;
  return Added::Yes;
}

// A transition not after the thread's newest (addTransition).
ThreadTimeline::Added ThreadTimeline::placeTransition(int64_t t, int state, uint32_t object) {
  if (t < rawFloor_) return Added::Late;
  const Raw *it;
  Added a = placeAt(trans_, t, [&](const Raw &r) { return r.state == state && r.object == object; },
                    &it);
  if (a != Added::Yes) return a;
  trans_.insert(it, Raw{t, object, uint8_t(state), 0});
  appendFrom_ = std::max(appendFrom_, trans_.back().t + 1);
  transitionDirty(t);
  return Added::Yes;
}

ThreadTimeline::Added ThreadTimeline::addSwitch(int64_t t, int kind, uint32_t cpu) {
  if (t < rawFloor_) return Added::Late;
  const uint16_t c = cpu < uint32_t(limits::kMaxCpus) ? uint16_t(cpu) : uint16_t(kNoCpu);
  if (sw_.empty() || t > sw_.back().t) {
    sw_.push_back(Raw{t, 0, uint8_t(kind), c});
  } else {
    const Raw *it;
    Added a = placeAt(
        sw_, t, [&](const Raw &r) { return r.state == kind && r.cpu == c; }, &it);
    if (a != Added::Yes) return a;
    sw_.insert(it, Raw{t, 0, uint8_t(kind), c});
  }
  if (!derived_) return Added::Yes;  // nothing derived to mark
  // The clock share of every tick in the sample span around t changes, and
  // so do the ends of each off-CPU span ending in that sample span (its wait
  // for a CPU, its switch's own time: spanEnd), from the off-CPU span's
  // start: a switch-in sent after the read that closed its span once left
  // the sleep before that read as derived (a sleep of all of it).
  markDirty(sleepStartBefore(sampleSpanStart(t)));
  return Added::Yes;
}

int64_t ThreadTimeline::sampleSpanStart(int64_t t) const {
  const LwpSeries::Point *p = lwp.at(t);
  while (p && lwpReadNs(*p) > t) p = lwp.at(p->t - 1);
  return std::min(t, p ? p->t : baselineZero ? info.startNs : t);
}

int64_t ThreadTimeline::sleepStartBefore(int64_t t) const {
  auto last = upperBoundNearEnd(sw_.begin(), sw_.end(), t - 1, TimeOf());
  return last != sw_.begin() && ((last - 1)->state == THREADMON__SWITCH_KIND__SWITCH_OUT ||
                                 (last - 1)->state == THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT)
             ? (last - 1)->t
             : t;
}

void ThreadTimeline::addSwitchGap(int64_t t) {
  if (t < rawFloor_ || sw_.empty()) return;  // no records yet: nothing to distrust
  auto it = upperBoundNearEnd(sw_.begin(), sw_.end(), t, TimeOf());
  if (it != sw_.begin() && (it - 1)->state == kSwitchGap) return;
  sw_.insert(it, Raw{t, 0, kSwitchGap, uint16_t(kNoCpu)});
  // As a record's (addSwitch): the split of its whole sample span changes.
  // (From the sample at or before t only, a gap before a thread's first
  // sample re-derived from t, and the span before it kept the split made
  // without the gap: a stepped read differed from a whole one.)
  markDirty(sleepStartBefore(sampleSpanStart(t)));
}

void ThreadTimeline::sampleAdded(int64_t prevTick, int64_t prevSample) {
  // Inside the span lastSaid walked: it may say something.
  if (prevSample < saidHi_) saidHi_ = saidLo_ = INT64_MIN;
  const LwpSeries::Point *last = lwp.last();
  const bool atEnd = lwp.size() == 1 ? prevSample == INT64_MIN : (last - 1)->t == prevSample;
  const LwpSeries::Point *added = atEnd                       ? last
                                  : prevSample == INT64_MIN ? lwp.first()
                                                            : lwp.after(prevSample);
  const bool readIdle = added && offCpuCode(added) == int(FinalState::Idle);
  anyIdleRead_ = anyIdleRead_ || readIdle;
  // Nothing derived (or nothing at or after the derived end, below): no
  // mark to make. Live, the derivation runs every 50 ms, so most samples
  // arrive past it.
  if (prevTick == INT64_MIN || !derived_) return;
  markDirty(prevTick);
  // A read that found the thread waiting for work: the ticks up to
  // kSaidSpanNs before it that no read before them said anything of took
  // sleeping for want of one (sweep's saidAfter), and take its word now;
  // those before an earlier idle read take that one's. Any other read (a
  // state letter's, D) is no such bound: saidAfter looks past it (a
  // bound there left mariadb's ticks before a D read asleep, idle whole).
  if (readIdle) {
    const LwpSeries::Point *before = nullptr;
    for (const LwpSeries::Point *q = added;
         q != lwp.first() && (q - 1)->t >= added->t - kSaidSpanNs;)
      if (offCpuCode(--q) == int(FinalState::Idle)) {
        before = q;
        break;
      }
    const int64_t unsaidFrom =
        std::max(added->t - kSaidSpanNs, before ? before->t + kSaidSpanNs : INT64_MIN);
    if (unsaidFrom < added->t) markDirty(std::max({unsaidFrom, rawFloor_, prevTick - kRawKeepNs}));
  }
  // The new sample closes a span back to the previous one: ticks in it with
  // on-CPU time took their clock share from a span not known then.
  int64_t from = prevSample != INT64_MIN ? prevSample : (baselineZero ? info.startNs : prevTick);
  // It also tells how long a sleep the thread left in the span ended in a
  // wait for a CPU: that sleep may have begun before the previous sample,
  // and is re-split even when the thread spent none of it on a CPU (a read
  // a window's sums took before the sample came did not match a whole read).
  from = std::max({sleepStartBefore(from), rawFloor_, prevTick - kRawKeepNs});
  if (from < prevTick && from < derivedUntil_) markDirty(from);
}

const LwpSeries::Point *ThreadTimeline::lastSaid(const LwpSeries::Point *p) {
  const int64_t oldest = p->t - kSaidSpanNs;
  const LwpSeries::Point *first = lwp.first(), *q = p;
  while (q && q->t >= oldest) {
    if (q->t > saidLo_ && q->t <= saidHi_) {
      q = lwp.at(saidLo_);  // walked before: none of those said
      continue;
    }
    if (offCpuCode(q) >= 0) break;
    q = q == first ? nullptr : q - 1;
  }
  const LwpSeries::Point *found = q && q->t >= oldest ? q : nullptr;
  if (p->t >= saidHi_) {
    saidHi_ = p->t;
    saidLo_ = found ? found->t : oldest - 1;
  }
  return found;
}

void ThreadTimeline::setStart(int64_t t) {
  // Evicted intervals cannot be derived again: the start stays.
  if (t == info.startNs || !cuts_.empty()) return;
  info.startNs = t;
  iv_.clear();
  splits_.clear();
  lwp.thinOnlyBefore(INT64_MIN);
  derived_ = false;
  dirtyFrom_ = INT64_MAX;
}

// Inline: called for every interval derived (the model is built -fPIC),
// and from ten places in sweep, where GCC would not inline it otherwise.
[[gnu::always_inline]] inline void ThreadTimeline::push(int64_t t, unsigned code, int cpu,
                                                        uint32_t payload) {
  pushBits(t, bitsOf(code, cpu), payload);
}

[[gnu::always_inline]] inline void ThreadTimeline::pushBits(int64_t t, uint32_t bits,
                                                            uint32_t payload) {
  auto same = [&](const Packed &p) { return (p.hi & 0xFFFF0000u) == bits && p.payload == payload; };
  if (!iv_.empty() && same(iv_.back())) return;
  // A zero-length interval is replaced, never kept.
  if (!iv_.empty() && startOf(iv_.back()) >= t) {
    iv_.pop_back();
    if (!iv_.empty() && same(iv_.back())) return;
  }
  int64_t rel = std::clamp<int64_t>(t - base_, 0, kMaxRel);
  iv_.push_back(Packed{uint32_t(rel), uint32_t(rel >> 32) | bits, payload});
}

void ThreadTimeline::truncate(int64_t t) {
  auto it = std::lower_bound(iv_.begin(), iv_.end(), t,
                             [this](const Packed &p, int64_t x) { return startOf(p) < x; });
  iv_.erase(it, iv_.end());
}

void ThreadTimeline::settle(const TickTimes &ticks, int64_t horizon) {
  int64_t h = info.endNs >= 0 ? std::min(horizon, info.endNs) : horizon;
  if (!derived_ && h <= info.startNs) return;
  // ThreadStart seen after the first derivation: the clock's zero baseline
  // at the start changes the first spans.
  if (derived_ && baselineZero != derivedBaseline_) dirtyFrom_ = info.startNs;
  derivedBaseline_ = baselineZero;
  int64_t from = derived_ ? std::min({dirtyFrom_, derivedUntil_, h}) : info.startNs;
  if (derived_ && dirtyFrom_ == INT64_MAX && h == derivedUntil_) return;
  // Re-derive whole ticks: the fallback split depends on the whole tick.
  auto tk = std::upper_bound(ticks.begin(), ticks.end(), from);
  if (tk != ticks.begin()) from = *(tk - 1);
  from = std::max({from, info.startNs, rawFloor_});
  truncate(from);
  derived_ = true;
  derivedUntil_ = from;
  if (h > from) {
    // A window's first derivation pushes all its intervals at once: room
    // for at most as many as the sweep can push, made before, so that the
    // vector does not grow by doubling, copying itself each time (a third
    // of the model's copies). What doubling would not have taken is given
    // back after (the pages never written were never resident), so that
    // live, a few records at a time, it grows on as before.
    const size_t bound = sweepBound(ticks, from, h), need = iv_.size() + bound;
    const bool bulk = need > 2 * iv_.capacity();
    if (bulk) iv_.reserve(need);
    sweep(ticks, from, h);
    if (bulk) iv_.shrinkToDoubling();
    derivedUntil_ = h;
  }
  dirtyFrom_ = INT64_MAX;
  // The samples a sweep from here reads (that at its start and the second
  // lastSaid looks back) and after stay at full rate: a model that holds
  // more than CounterSeries::kRecentNs before it derives (a whole read of a
  // long capture) derived its old ticks from one sample a second (a busy
  // thread's first 20 s of 60 read as a third sleep).
  const LwpSeries::Point *at = lwp.at(derivedUntil_);
  const int64_t keptFrom = at ? at->t : derivedUntil_;  // from the file: may be anything
  lwp.thinOnlyBefore(keptFrom < INT64_MIN + kSaidSpanNs ? INT64_MIN : keptFrom - kSaidSpanNs);
  // Raw events are only needed to re-derive recent ticks.
  int64_t oldest = std::min(trans_.empty() ? INT64_MAX : trans_.front().t,
                            sw_.empty() ? INT64_MAX : sw_.front().t);
  if (oldest != INT64_MAX && oldest < h - 2 * kRawKeepNs) {
    auto ft = std::upper_bound(ticks.begin(), ticks.end(), h - kRawKeepNs);
    if (ft != ticks.begin()) trimRaw(*(ft - 1));
  }
}

size_t ThreadTimeline::sweepBound(const TickTimes &ticks, int64_t from, int64_t to) const {
  // The sweep cuts [from, to) into segments at every record and tick in it,
  // and pushes at most one interval per segment, two where a switch record
  // says the thread slept (its end may be a wait for a CPU).
  const auto before = [](const auto &e, int64_t x) { return TimeOf()(e) < x; };
  auto in = [&](const auto &v) {
    const auto a = std::lower_bound(v.begin(), v.end(), from, before);
    return size_t(std::lower_bound(a, v.end(), to, before) - a);
  };
  const size_t segments = in(trans_) + in(sw_) + in(ticks) + 1;
  return sw_.empty() ? segments : 2 * segments;
}

void ThreadTimeline::trimRaw(int64_t floor) {
  auto trim = [floor](PodVector<Raw> &v) {
    auto it = std::upper_bound(v.begin(), v.end(), floor,
                               [](int64_t x, const Raw &r) { return x < r.t; });
    if (it != v.begin()) --it;  // keep the event that gives the state at floor
    v.erase(v.begin(), it);
  };
  trim(trans_);
  trim(sw_);
  rawFloor_ = std::max(rawFloor_, floor);
  appendFrom_ = std::max(appendFrom_, rawFloor_);
}

int64_t ThreadTimeline::recordsOnCpu(int64_t t0, int64_t t1, bool programCodeOnly,
                                     RawNear near) const {
  if (t1 <= t0) return 0;
  if (t0 < rawFloor_ || sw_.empty()) return -1;
  auto after = [t0](const PodVector<Raw> &v, size_t hint) {
    return upperBoundNear(v.begin(), v.end(), v.begin() + std::ptrdiff_t(std::min(hint, v.size())),
                          t0, TimeOf());
  };
  auto si = after(sw_, near.sw), ui = after(trans_, near.trans);
  // Before its first record a thread switched in was off a CPU; one switched
  // out was on it since we do not know when.
  int kind = si != sw_.begin() ? switchKind((si - 1)->state) : -1;
  if (kind < 0 && sw_.front().state != THREADMON__SWITCH_KIND__SWITCH_IN) return -1;
  int us = ui != trans_.begin() ? int((ui - 1)->state) : int(THREADMON__THREAD_STATE__STATE_RUNNING);
  auto counted = [programCodeOnly](int u) {
    return !programCodeOnly || u == THREADMON__THREAD_STATE__STATE_RUNNING ||
           u == THREADMON__THREAD_STATE__STATE_UNKNOWN;
  };
  int64_t on = 0, p = t0;
  for (;;) {
    int64_t ns = si != sw_.end() ? si->t : INT64_MAX;
    int64_t nu = programCodeOnly && ui != trans_.end() ? ui->t : INT64_MAX;
    int64_t q = std::min({ns, nu, t1});
    if (kind == THREADMON__SWITCH_KIND__SWITCH_IN && counted(us)) on += q - p;
    if (q >= t1) break;
    for (; si != sw_.end() && si->t == q; ++si) kind = switchKind(si->state);
    for (; programCodeOnly && ui != trans_.end() && ui->t == q; ++ui) us = ui->state;
    p = q;
  }
  return on;
}

uint32_t ThreadTimeline::clockShare(int64_t a, RawNear near) const {
  // The samples around the tick: the first after its start, and the one
  // before that (or the zero baseline at the thread's start).
  const LwpSeries::Point *pb = lwp.after(a);
  if (!pb) return kFracOne;  // not known yet; the sample re-derives this tick
  const LwpSeries::Point *pa = lwp.at(pb->t - 1);
  if (!pa && !baselineZero) return kFracOne;
  bool exact = lwpReadSent(*pb) && (!pa || lwpReadSent(*pa));
  int64_t ra = pa ? lwpReadNs(*pa) : info.startNs, rb = lwpReadNs(*pb);
  int64_t byRecords = recordsOnCpu(ra, rb, false, near);
  if (byRecords <= 0) return kFracOne;
  int64_t clock = int64_t(pb->v[kOncpu]) - (pa ? int64_t(pa->v[kOncpu]) : 0);
  int64_t stolen = byRecords - std::max<int64_t>(0, clock);  // at most byRecords
  int64_t noise = std::max({kStealNoiseNs, (rb - ra) / kStealNoiseDiv, exact ? 0 : kOldClockLagNs});
  if (stolen < noise) return kFracOne;
  // The hypervisor takes the vCPU for milliseconds at a time: that lands in
  // the long stretches of program code, seldom in the short bursts on a CPU
  // inside a wrapped call (measured: barrier workers, whose CPU clock
  // outside the barrier matches only this way). Charge program code first.
  int64_t running = recordsOnCpu(ra, rb, true, near);
  if (running <= 0) return kFracOne;  // no program code on a CPU in the span
  stolen = std::min(stolen, running);
  return uint32_t(std::lround(double(running - stolen) / double(running) * kFracOne));
}

// A thread born under the switch records (its first record a switch-in, at
// or before its first transition) waited for a CPU from its create until
// then: it cannot have slept before it ever ran.
bool ThreadTimeline::bornWaiting() const {
  return baselineZero && !sw_.empty() && sw_.front().state == THREADMON__SWITCH_KIND__SWITCH_IN &&
         (trans_.empty() || sw_.front().t <= trans_.front().t);
}

// run_delay grows when a queued thread gets a CPU, by the whole wait: the
// growth between two sample reads is the waits whose switch-in falls
// between them. Preempted waits are known from the records; what is left
// is the woken-but-waiting ends of the voluntary spans ending there, shared
// in proportion to their lengths. The CPU clock's excess over the records'
// on-CPU time between the reads is the switches' own time, shared equally
// by the switch-ins there (a cost per switch, not per length).
ThreadTimeline::SpanEnd ThreadTimeline::spanEnd(int64_t out, int64_t in, bool voluntary,
                                                WakeSplit *cache) const {
  const LwpSeries::Point *pb = lwp.after(in - 1);
  while (pb && lwpReadNs(*pb) < in) pb = lwp.after(pb->t);
  if (!pb || !lwpReadSent(*pb)) return {};  // not sampled yet: a later sample re-derives
  const LwpSeries::Point *pa = lwp.at(pb->t - 1);
  if (!pa && !baselineZero) return {};
  if (pa && !lwpReadSent(*pa)) return {};
  const int64_t ra = pa ? lwpReadNs(*pa) : info.startNs, rb = lwpReadNs(*pb);
  if (cache->a != ra || cache->b != rb) {
    *cache = WakeSplit{};
    cache->a = ra;
    cache->b = rb;
    const int64_t grew = int64_t(pb->v[kRunqueue]) - (pa ? int64_t(pa->v[kRunqueue]) : 0);
    int64_t known = 0, voluntaryNs = 0, switchIns = 0;
    auto it = std::upper_bound(sw_.begin(), sw_.end(), ra,
                               [](int64_t x, const Raw &r) { return x < r.t; });
    for (; it != sw_.end() && it->t <= rb; ++it) {
      if (it->state != THREADMON__SWITCH_KIND__SWITCH_IN) continue;
      if (it == sw_.begin()) {
        if (!bornWaiting()) return {};  // what came before its first record is not known
        known += it->t - info.startNs;  // a newborn's wait for its first CPU
        continue;
      }
      const Raw &prev = *(it - 1);
      if (prev.state == THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT) known += it->t - prev.t;
      else if (prev.state == THREADMON__SWITCH_KIND__SWITCH_OUT)
        voluntaryNs += it->t - prev.t;
      else
        return {};  // records lost: the waits are not known
      switchIns++;
    }
    const int64_t noise = std::max(kStealNoiseNs, (rb - ra) / kStealNoiseDiv);
    const int64_t woken = grew - known;
    if (voluntaryNs > 0 && woken > noise)
      cache->share = std::min(1.0, double(woken) / double(voluntaryNs));
    const int64_t byRecords = recordsOnCpu(ra, rb);
    const int64_t clock = int64_t(pb->v[kOncpu]) - (pa ? int64_t(pa->v[kOncpu]) : 0);
    if (switchIns > 0 && byRecords >= 0 && clock - byRecords > noise)
      cache->switching = (clock - byRecords) / switchIns;
  }
  if (in <= cache->a || in > cache->b) return {};
  SpanEnd e;
  e.switching = std::min(cache->switching, in - out);
  if (voluntary) e.waited = int64_t(cache->share * double(in - out - e.switching));
  return e;
}

void ThreadTimeline::sweep(const TickTimes &ticks, int64_t from, int64_t to) {
  // Live, from is among the newest records; a first derivation (a window
  // read from a capture) starts at the oldest.
  auto firstAfter = [from](const PodVector<Raw> &v) {
    if (v.empty()) return size_t(0);
    auto hint = from - v.front().t < v.back().t - from ? v.begin() : v.end();
    return size_t(upperBoundNear(v.begin(), v.end(), hint, from, TimeOf()) - v.begin());
  };
  size_t ui = firstAfter(trans_), si = firstAfter(sw_);
  int ustate = ui > 0 ? int(trans_[ui - 1].state) : int(THREADMON__THREAD_STATE__STATE_RUNNING);
  uint32_t uobj = ui > 0 ? trans_[ui - 1].object : 0;
  int skind = si > 0 ? switchKind(sw_[si - 1].state) : -1;
  int scpu = si > 0 ? sw_[si - 1].cpu : -1;
  const int64_t firstIn = bornWaiting() ? sw_.front().t : INT64_MIN;
  // The records, as locals: the intervals pushed below might alias the
  // vectors' ends as far as the compiler knows, which re-read them per step.
  const Raw *const trans = trans_.data(), *const sw = sw_.data();
  const size_t nTrans = trans_.size(), nSw = sw_.size();
  // The first transition at or after to (each tick appends at most those
  // before it), and the newest one.
  const size_t transTo = size_t(std::lower_bound(trans + ui, trans + nTrans, to,
                                                 [](const Raw &r, int64_t x) { return r.t < x; }) -
                                trans);
  const int64_t lastTransition = nTrans > 0 ? trans[nTrans - 1].t : INT64_MIN;
  WakeSplit wake;
  // The split of the newest tick before from with RUNNING time to split, as
  // a sweep from the thread's start would have it (splits_ holds the newest
  // few): a partial tail tick without a sample continues it.
  while (!splits_.empty() && splits_.back().tick >= from) splits_.pop_back();
  // The newest splits made here, splitCount of them, into splits_ at the
  // end (an erase and a push_back per tick were a tenth of its cost); the
  // newest split is the last of them, else splits_' last.
  std::array<TickSplit, kSplitsKept> newSplits;
  size_t splitCount = 0;

  int64_t a = from;
  // The tick after a; ticks are distinct, so the next one is one further.
  const auto ticksEnd = ticks.end();
  auto nt = std::upper_bound(ticks.begin(), ticksEnd, a);
  // The ticks whose segments pass 2 may append at a cursor: those in
  // [cursorFrom, cursorTo] (after the thread first ran, and with starts
  // after base_ that fit a Packed's 48 bits).
  const int64_t cursorFrom = std::max(firstIn, base_ == INT64_MAX ? INT64_MAX : base_ + 1);
  const int64_t cursorTo = base_ > INT64_MAX - kMaxRel ? INT64_MAX : base_ + kMaxRel;
  // The series does not change during the sweep: its end as a local.
  const LwpSeries::Point *const samplesEnd = lwp.first() + lwp.size();
  const LwpSeries::Point *pb = lwp.at(from);  // the sample at the tick's start, a
  // What pb, and said, found the thread doing off a CPU (offCpuCode): read
  // once per sample, not per tick, and the tick's pa is the last one's pb.
  int bCode = offCpuCode(pb);
  const LwpSeries::Point *said = pb ? lastSaid(pb) : nullptr;  // the newest sample that did
  int saidCode = offCpuCode(said);
  // The first sample after pb that found the thread waiting for work
  // (ahead), for ticks no read before said anything of; none up to
  // aheadEnd. Only idle: a state letter (I/O wait, stopped) is of its moment,
  // and sleeping is what no read gives anyway.
  const LwpSeries::Point *ahead = nullptr, *aheadEnd = lwp.first();
  const auto saidAfter = [&](const LwpSeries::Point *p, int64_t b) {
    if (!anyIdleRead_) return -1;  // a busy thread's every tick asks
    const LwpSeries::Point *q = p ? p + 1 : lwp.first();  // no p: none at or before b
    if (ahead && ahead >= q) return ahead->t - b <= kSaidSpanNs ? int(FinalState::Idle) : -1;
    for (q = std::max(q, aheadEnd); q < samplesEnd && q->t - b <= kSaidSpanNs; ++q) {
      if (offCpuCode(q) == int(FinalState::Idle)) {
        ahead = aheadEnd = q;
        return int(FinalState::Idle);
      }
    }
    aheadEnd = q;
    return -1;
  };
  // The key (bits over payload) of the last interval held (kNoIntervalKey:
  // none), carried from tick to tick at the cursor, read again after the
  // other ticks' pushes.
  const auto lastKeyHeld = [this] {
    return iv_.empty() ? kNoIntervalKey
                       : uint64_t(iv_.back().hi & 0xFFFF0000u) << 32 | iv_.back().payload;
  };
  uint64_t lastKey = lastKeyHeld();
  // The tick [a, b), what its samples say and how it is cut, set for each
  // tick: the lambdas below that read them are made once, not per tick.
  bool bIsTick = false;
  int64_t b = a;
  const LwpSeries::Point *pa = nullptr;
  uint32_t kstate = 0;
  int lastCpu = -1;
  unsigned rest = 0;
  uint32_t fOn = 0, fRq = 0;
  int64_t on0 = 0, rq0 = 0;
  bool bySamples = true, noSwitches = true, atCursor = false;
  // What RUNNING time with no switch information becomes: the split.
  struct RunAs {
    unsigned code;
    int cpu;
    uint32_t payload;
  };
  const auto runAs = [&](uint32_t on, uint32_t rq) {
    if (on == kFracOne) return RunAs{unsigned(FinalState::OnCpu), lastCpu, 0};
    if (rq == kFracOne) return RunAs{unsigned(FinalState::Runnable), -1, 0};
    if (on == 0 && rq == 0) return RunAs{rest, -1, 0};
    return RunAs{kMixed, lastCpu, mixPayload(on, rq, restBitsOf(rest))};
  };

  // A tick cut by transitions alone (no switch record in it, and no
  // switch kind going on), after the thread first ran, with starts that
  // fit a Packed's 48 bits: nearly every tick. Blocked and RUNNING
  // segments only, the latter all split alike (run: their key), appended
  // at a cursor, at most one per transition and one for the tick's start.
  // Their starts need no clamp, and each is after every start held (those
  // before from, then the segments'): none is of zero length, only the
  // same as the last one (whose key is kept in a register). Returns
  // whether the tick had RUNNING time.
  const auto appendAtCursor = [&](const RunAs &run) __attribute__((always_inline)) {
    // Locals all (ui as a pointer, b): stores through a reference to ui, a
    // size_t, might change b, an int64_t, as far as the compiler knows.
    const uint64_t runKey = uint64_t(bitsOf(run.code, run.cpu)) << 32 | run.payload;
    Packed *o = iv_.reserveMore(transTo - ui + 1);
    const int64_t base = base_, end = b;
    int64_t p = a;
    int us = ustate;
    uint32_t uo = uobj;
    bool ran = false;
    const auto segment = [&](int64_t q) __attribute__((always_inline)) {
      if (q <= p) return;
      const uint64_t e = kSegmentKeys[size_t(us)];
      uint64_t key = (e & ~uint64_t(0xFFFFFFFF)) | (uint64_t(uo) & e);
      if (key <= kRunningKey) {
        if (key == kRunningKey) {
          key = runKey;
          ran = true;
        } else {
          key = lastKey;  // EXITED: nothing
        }
      }
      if (key != lastKey) {
        // The start (under 48 bits here) and the bits above it, as one
        // word: stored at once.
        const uint64_t startBits = uint64_t(p - base) | (key & ~uint64_t(0xFFFFFFFF));
        *o++ = Packed{uint32_t(startBits), uint32_t(startBits >> 32), uint32_t(key)};
        lastKey = key;
      }
      p = q;
    };
    const Raw *r = trans + ui;
    const auto next = [&]() __attribute__((always_inline)) {
      segment(r->t);
      us = r->state;
      uo = r->object;
    };
    if (lastTransition >= end)  // one at or after the end stops the walk: no index test
      for (; r->t < end; ++r) next();
    else
      for (const Raw *const last = trans + nTrans; r < last && r->t < end; ++r) next();
    segment(end);
    iv_.setEnd(o);
    ui = size_t(r - trans);
    ustate = us;
    uobj = uo;
    return ran;
  };

  // Any other tick: a first pass over its segments for its RUNNING time
  // to split (and the split's other inputs), then the split, then (not at
  // the cursor) its intervals. Returns whether it had RUNNING time. Out of
  // line, so that the ticks above keep their registers; it leaves the
  // append at the cursor to the caller, so that appendAtCursor is inlined
  // once, its captures not reached through a closure in memory.
  const auto otherTick = [&]() __attribute__((noinline)) {
    // Walks the segments of [a,b) with the state each one has; segment
    // callbacks get (p, q, ustate, uobj, skind, scpu).
    auto walk = [&](size_t &u, size_t &s, int &us, uint32_t &uo, int &sk, int &sc, auto &&seg) {
      int64_t p = a;
      for (;;) {
        int64_t nu = u < nTrans ? trans[u].t : INT64_MAX;
        int64_t ns = s < nSw ? sw[s].t : INT64_MAX;
        int64_t q = std::min({nu, ns, b});
        if (q > p) seg(p, q, us, uo, sk, sc);
        if (q >= b) break;
        for (; u < nTrans && trans[u].t == q; u++) {
          us = trans[u].state;
          uo = trans[u].object;
        }
        for (; s < nSw && sw[s].t == q; s++) {
          sk = switchKind(sw[s].state);
          sc = sw[s].cpu;
        }
        p = q;
      }
    };
    auto isRunning = [](int us) {
      return us == THREADMON__THREAD_STATE__STATE_RUNNING ||
             us == THREADMON__THREAD_STATE__STATE_UNKNOWN;
    };

    // Pass 1: RUNNING time with no switch information, to be split by the
    // tick's schedstat deltas.
    int64_t fallbackNs = 0;
    int wrappedWaits = 0;   // wrapped blocking calls the tick saw (begun or going on)
    bool folded = false;    // some of its RUNNING time is a folded gap (UNKNOWN): waits unseen
    int endState = ustate;  // interposition state at the tick's end
    if (noSwitches) {
      // Its switch kind holds throughout, and the transitions alone cut
      // it, each segment running from one (the last of those at an
      // instant) to the next, without a merge with the switch records. A
      // known kind leaves no RUNNING time to split, and the other results
      // here are only read for such time.
      if (skind < 0) {
        int us = ustate, prevState = -1;
        const bool ranBefore = a >= firstIn;  // nearly always: no test per segment
        auto count = [&](int64_t p, int64_t q) {
          const uint32_t segBits = segmentBitsOf(kSegmentKeys[size_t(us)]);
          if (segBits == kRunningSegment && (ranBefore || p >= firstIn)) {
            fallbackNs += q - p;
            folded = folded || us == THREADMON__THREAD_STATE__STATE_UNKNOWN;
          }
          wrappedWaits += segBits > kRunningSegment && us != prevState;
          prevState = us;
        };
        int64_t p = a;
        for (size_t u = ui; u < nTrans && trans[u].t < b; u++) {
          if (trans[u].t > p) {
            count(p, trans[u].t);
            p = trans[u].t;
          }
          us = trans[u].state;
        }
        count(p, b);
        endState = us;
      }
    } else {
      size_t u = ui, s = si;
      int us = ustate, sk = skind, sc = scpu;
      uint32_t uo = uobj;
      int prevState = -1;
      walk(u, s, us, uo, sk, sc, [&](int64_t p, int64_t q, int ust, uint32_t, int k, int) {
        if (isRunning(ust) && k < 0 && p >= firstIn) {
          fallbackNs += q - p;
          folded = folded || ust == THREADMON__THREAD_STATE__STATE_UNKNOWN;
        }
        if (blockedCode(ust) >= 0 && ust != prevState) wrappedWaits++;
        prevState = ust;
        endState = ust;
      });
    }
    if (fallbackNs <= 0) {
      fOn = fRq = 0;
    } else if (!bySamples) {
      int64_t dOn = std::max<int64_t>(0, int64_t(pb->v[kOncpu]) - on0);
      int64_t dRq = std::max<int64_t>(0, int64_t(pb->v[kRunqueue]) - rq0);
      double on = std::min(1.0, double(dOn) / double(fallbackNs));
      double rq = std::min(1.0 - on, double(dRq) / double(fallbackNs));
      // No sign of a sleep outside wrapped calls: not asleep at the read
      // while running program code, and no more voluntary switches than
      // the tick's wrapped waits explain (a blocking wrapped call sleeps
      // at most twice: a condition wait, then its mutex). schedstat lags
      // by up to a scheduler tick (the run time of a thread on a CPU, the
      // queue wait of one still queued), which would otherwise read as
      // sleep: split the tick by the ratio. A thread in a storm of futex
      // waits no wrapper sees (glibc's random() lock) has switched far
      // more often, and its sleep stays sleep.
      bool asleepAtRead = (kstate == 'S' || kstate == 'D') && isRunning(endState);
      uint64_t volSwitches =
          pa && pb->v[kVolCtxsw] > pa->v[kVolCtxsw] ? pb->v[kVolCtxsw] - pa->v[kVolCtxsw] : 0;
      bool unexplained = volSwitches > uint64_t(2 * wrappedWaits);
      // A folded gap hides its wrapped waits: its switches say nothing.
      bool neverSlept = !asleepAtRead && !unexplained && !folded && dOn + dRq > 0;
      if (neverSlept) {
        on = double(dOn) / double(dOn + dRq);
        rq = 1.0 - on;
      }
      fOn = roundFrac(on * kFracOne);
      fRq = std::min(kFracOne - fOn, roundFrac(rq * kFracOne));
    }
    if (atCursor) return fallbackNs > 0;  // its intervals are appended by the caller

    // Pass 2: emit.
    const RunAs run = runAs(fOn, fRq);
    const unsigned runCode = run.code;
    const int runCpu = run.cpu;
    const uint32_t runPayload = run.payload;
    // Clock share of the tick's on-CPU time by records, looked up once.
    uint32_t share = kFracOne;
    bool shareKnown = false;
    auto place = [&](int64_t p, int64_t q, int ust, uint32_t uo, int k, int c) {
      int bc = blockedCode(ust);
      if (bc >= 0) {
        push(p, unsigned(bc), -1, ust == THREADMON__THREAD_STATE__STATE_SLEEPING ? 0 : uo);
      } else if (!isRunning(ust)) {
        return;  // EXITED: the lifetime ends here
      } else if (k < 0 && p < firstIn) {
        push(p, unsigned(FinalState::Runnable), -1, 0);  // not yet run
      } else if (k == THREADMON__SWITCH_KIND__SWITCH_IN) {
        if (!shareKnown) {
          share = clockShare(a, RawNear{si, ui});
          shareKnown = true;
        }
        if (share >= kFracOne)
          push(p, unsigned(FinalState::OnCpu), c, 0);
        else
          push(p, kMixed, c, mixPayload(share, 0, kRestStolen));
      } else if (k == THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT ||
                 k == THREADMON__SWITCH_KIND__SWITCH_OUT) {
        // Off a CPU until the next switch-in, whose last microseconds
        // the thread's clock ran (the switch itself). Asleep in a call no
        // wrapper sees, its end may be a wait for a CPU after the
        // wake-up, which the run-queue counter shows.
        const bool voluntary = k == THREADMON__SWITCH_KIND__SWITCH_OUT;
        int64_t woke = INT64_MAX, switchedAt = INT64_MAX;
        int switchCpu = -1;
        // The walk's next switch record is the first after p.
        auto nx = sw_.begin() + std::ptrdiff_t(si);
        if (nx != sw_.end() && nx != sw_.begin() &&
            nx->state == THREADMON__SWITCH_KIND__SWITCH_IN) {
          const SpanEnd e = spanEnd((nx - 1)->t, nx->t, voluntary, &wake);
          if (e.switching > 0) switchedAt = nx->t - e.switching;
          if (e.waited > 0) woke = nx->t - e.switching - e.waited;
          switchCpu = nx->cpu;
        }
        if (voluntary && std::min(woke, switchedAt) > p) push(p, rest, -1, 0);
        const int64_t queuedFrom = voluntary ? woke : p;
        if (queuedFrom < q && queuedFrom < switchedAt)
          push(std::max(p, queuedFrom), unsigned(FinalState::Runnable), -1, 0);
        if (switchedAt < q)
          push(std::max(p, switchedAt), unsigned(FinalState::OnCpu), switchCpu, 0);
      } else {
        push(p, runCode, runCpu, runPayload);
      }
    };
    walk(ui, si, ustate, uobj, skind, scpu, place);
    return fallbackNs > 0;
  };
  while (a < to) {
    bIsTick = nt != ticksEnd && *nt <= to;
    b = bIsTick ? *nt : to;
    pa = pb;
    const int aCode = bCode;
    // b only grows: the sample at b is nearly always the one after the
    // last (a sample per tick), or the last itself.
    if (pb) {
      const LwpSeries::Point *const old = pb;
      while (pb + 1 < samplesEnd && pb[1].t <= b) ++pb;
      if (pb != old) bCode = offCpuCode(pb);
    } else if ((pb = lwp.at(b))) {
      bCode = offCpuCode(pb);
    }
    kstate = pb ? lwpAuxKstate(pb->aux) : 0;
    lastCpu = pb ? lwpAuxCpu(pb->aux) : -1;
    const int before = said && pb && pb->t - said->t <= kSaidSpanNs ? saidCode : -1;
    rest = restCode(bCode, pa != pb ? aCode : -1,
                    bCode < 0 && (pa == pb || aCode < 0) && before < 0 ? saidAfter(pb, b) : before);
    if (bCode >= 0) {
      said = pb;
      saidCode = bCode;
    }

    // The split of the tick's RUNNING time with no switch information
    // (fOn, fRq: its shares on a CPU and runnable), when the samples alone
    // give it whatever the tick's segments are: no sample, a partial tail
    // tick with no sample (it continues the last split), no baseline (the
    // state letter is all we know), or counters that did not move (nine
    // ticks in ten of half.tmcap). Else it needs the tick's RUNNING time.
    fOn = fRq = 0;
    const bool newSample = pb && pb->t > a;
    on0 = pa ? int64_t(pa->v[kOncpu]) : 0;
    rq0 = pa ? int64_t(pa->v[kRunqueue]) : 0;
    bySamples = true;
    if (!pb) {
    } else if (!bIsTick && !newSample && (splitCount > 0 || !splits_.empty())) {
      const TickSplit &last =
          splitCount > 0 ? newSplits[(splitCount - 1) % kSplitsKept] : splits_.back();
      fOn = last.on;
      fRq = last.rq;
    } else if (!pa && !baselineZero) {
      fOn = kstate == 'R' ? kFracOne : 0;
    } else {
      bySamples = int64_t(pb->v[kOncpu]) - on0 <= 0 && int64_t(pb->v[kRunqueue]) - rq0 <= 0;
    }
    noSwitches = si >= nSw || sw[si].t >= b;
    atCursor = noSwitches && skind < 0 && a >= cursorFrom && b <= cursorTo;
    bool ran;
    if (atCursor) {
      if (!bySamples) otherTick();  // for the split
      ran = appendAtCursor(runAs(fOn, fRq));
    } else {
      ran = otherTick();
      lastKey = lastKeyHeld();
    }
    if (ran) newSplits[splitCount++ % kSplitsKept] = TickSplit{a, fOn, fRq};
    a = b;
    if (bIsTick) ++nt;
  }
  for (size_t k = splitCount > kSplitsKept ? splitCount - kSplitsKept : 0; k < splitCount; k++) {
    if (splits_.size() == kSplitsKept) splits_.erase(splits_.begin());
    splits_.push_back(newSplits[k % kSplitsKept]);
  }
}

void ThreadTimeline::eventGapSpans(const TimeRange &r, std::vector<TimeRange> *out) const {
  // Every UNKNOWN transition the timeline took is in info.eventGaps too
  // (SessionStore::applyTransitions), which never shrinks: a thread without
  // any has no gap, and its records need no walk (that walk over every
  // thread's records was 1% of a report).
  if (info.eventGaps.empty()) return;
  const int64_t end = lifetime().t1;
  // A gap ends at the next record: none before the record going on at r.t0
  // reaches into r (found by a search, not a walk over the whole history).
  size_t i = size_t(std::upper_bound(trans_.begin(), trans_.end(), r.t0,
                                     [](int64_t x, const Raw &e) { return x < e.t; }) -
                    trans_.begin());
  for (i = i > 0 ? i - 1 : 0; i < trans_.size() && trans_[i].t < r.t1; i++) {
    if (trans_[i].state != THREADMON__THREAD_STATE__STATE_UNKNOWN) continue;
    const int64_t t0 = trans_[i].t, t1 = i + 1 < trans_.size() ? trans_[i + 1].t : end;
    if (t1 > r.t0 && t0 < r.t1 && t1 > t0) out->push_back(TimeRange{t0, t1});
  }
}

TimeRange ThreadTimeline::lifetime() const {
  int64_t end = derivedUntil();
  if (info.endNs >= 0) end = std::min(end, info.endNs);
  return TimeRange{info.startNs, std::max(info.startNs, end)};
}

size_t ThreadTimeline::firstOverlapping(int64_t t) const {
  auto it = std::upper_bound(iv_.begin(), iv_.end(), t,
                             [this](int64_t x, const Packed &p) { return x < startOf(p); });
  return it == iv_.begin() ? 0 : size_t(it - iv_.begin()) - 1;
}

void ThreadTimeline::detailTimes(int64_t t0, int64_t t1, StateTimes *out) const {
  walkFrom(t0, [&](const Packed &p, int64_t start, int64_t end) {
    const int64_t s = std::max(start, t0), e = std::min(end, t1);
    if (s >= t1) return false;
    if (e <= s) return true;
    unsigned code = codeOf(p);
    int64_t d = e - s;
    if (code == kMixed) {
      Mix m = mixOf(p.payload);
      int64_t on = part(d, m.on), rq = part(d, m.rq);
      out->ns[size_t(FinalState::OnCpu)] += on;
      out->ns[size_t(FinalState::Runnable)] += rq;
      out->ns[restCodeOfMix(m.rest)] += d - on - rq;
    } else {
      out->ns[code] += d;
    }
    return true;
  });
}

void ThreadTimeline::stateTimes(const TimeRange &r, const TickTimes &, StateTimes *out) const {
  *out = StateTimes{};
  TimeRange life = lifetime();
  int64_t t0 = std::max(r.t0, life.t0), t1 = std::min(r.t1, life.t1);
  if (t1 <= t0) return;
  out->lifetimeNs = t1 - t0;
  const int64_t cut = evictedUntil();
  if (t0 < cut) {
    const auto a = cuts_.at(t0, info.startNs), b = cuts_.at(std::min(t1, cut), info.startNs);
    for (size_t k = 0; k < a.size(); k++) out->ns[k] += b[k] - a[k];
    t0 = cut;
  }
  if (t1 > t0) detailTimes(t0, t1, out);
}

void ThreadTimeline::stateAndCpuTimes(const TimeRange &r, const TickTimes &ticks, StateTimes *out,
                                      std::vector<int64_t> *perCpu) const {
  const TimeRange life = lifetime();
  const int64_t t0 = std::max(r.t0, life.t0), t1 = std::min(r.t1, life.t1);
  if (t1 <= t0 || t0 < evictedUntil()) {  // evicted time: each its own way
    stateTimes(r, ticks, out);
    cpuTimes(r, perCpu);
    return;
  }
  *out = StateTimes{};
  out->lifetimeNs = t1 - t0;
  // detailTimes and detailCpuTimes at once, d ns of p.
  const auto add = [&](const Packed &p, int64_t d) __attribute__((always_inline)) {
    const unsigned code = codeOf(p);
    int64_t on = d;
    if (code == kMixed) {
      Mix m = mixOf(p.payload);
      const int64_t rq = part(d, m.rq);
      on = part(d, m.on);
      out->ns[size_t(FinalState::OnCpu)] += on;
      out->ns[size_t(FinalState::Runnable)] += rq;
      out->ns[restCodeOfMix(m.rest)] += d - on - rq;
    } else {
      out->ns[code] += d;
      if (code != unsigned(FinalState::OnCpu)) return;
    }
    const int cpu = cpuOf(p);
    if (cpu < 0) return;
    if (perCpu->size() <= size_t(cpu)) perCpu->resize(size_t(cpu) + 1, 0);
    (*perCpu)[size_t(cpu)] += on;
  };
  // As walkFrom(t0) with each interval clipped to [t0, t1), but only the one
  // going on at t0 and the one t1 cuts are clipped: those between are
  // summed as they are (the clipping and its tests were half of the walk).
  const Packed *const iv = iv_.data();
  const size_t n = iv_.size();
  size_t i = firstOverlapping(t0);
  if (i >= n) return;
  const size_t last = n - 1;  // ends at derivedUntil_, not at a next start
  int64_t s = startOf(iv[i]);
  if (s < t0) {
    const int64_t e = i < last ? startOf(iv[i + 1]) : derivedUntil_;
    if (std::min(e, t1) > t0) add(iv[i], std::min(e, t1) - t0);
    if (i == last || e >= t1) return;
    s = e;
    i++;
  }
  for (; i < last; i++) {
    const int64_t e = startOf(iv[i + 1]);
    if (e > t1) break;
    if (e > s) add(iv[i], e - s);
    s = e;
  }
  if (s < t1) {
    const int64_t e = std::min(i < last ? startOf(iv[i + 1]) : derivedUntil_, t1);
    if (e > s) add(iv[i], e - s);
  }
}

void ThreadTimeline::intervals(const TimeRange &r, const TickTimes &ticks,
                               std::vector<StateInterval> *out) const {
  const TimeRange life = lifetime();
  const int64_t t0 = std::max(r.t0, life.t0), t1 = std::min(r.t1, life.t1);
  if (t1 <= t0) return;
  // A fresh vector gets room for the intervals held in r at once (mixed ones
  // give more, drawn tick by tick).
  if (out->empty()) {
    const auto last = std::lower_bound(
        iv_.begin(), iv_.end(), t1, [this](const Packed &p, int64_t x) { return startOf(p) < x; });
    const std::ptrdiff_t first = std::ptrdiff_t(firstOverlapping(t0));
    out->reserve(size_t(std::max<std::ptrdiff_t>(0, last - iv_.begin() - first)));
  }
  forEachPiece(r, ticks, [out](const StateInterval &iv) {
    if (!out->empty() && sameRun(out->back(), iv))
      out->back().end = iv.end;
    else
      out->push_back(iv);
  });
}

void ThreadTimeline::detailCpuTimes(int64_t t0, int64_t t1, std::vector<int64_t> *perCpu) const {
  walkFrom(t0, [&](const Packed &p, int64_t start, int64_t end) {
    const int64_t s = std::max(start, t0), e = std::min(end, t1);
    if (s >= t1) return false;
    int cpu = cpuOf(p);
    unsigned code = codeOf(p);
    if (e <= s || cpu < 0 || (code != kMixed && code != unsigned(FinalState::OnCpu))) return true;
    int64_t d = code == kMixed ? part(e - s, mixOf(p.payload).on) : e - s;
    if (perCpu->size() <= size_t(cpu)) perCpu->resize(size_t(cpu) + 1, 0);
    (*perCpu)[size_t(cpu)] += d;
    return true;
  });
}

void ThreadTimeline::cpuTimes(const TimeRange &r, std::vector<int64_t> *perCpu) const {
  TimeRange life = lifetime();
  int64_t t0 = std::max(r.t0, life.t0), t1 = std::min(r.t1, life.t1);
  if (t1 <= t0) return;
  const int64_t cut = evictedUntil();
  if (t0 < cut && !cpuEvicted_.empty()) {
    // Evicted time keeps its per-CPU split for the whole of it: a part of
    // it gets the part's on-CPU time in the same proportions.
    const size_t on = size_t(FinalState::OnCpu);
    const int64_t all = cuts_.total()[on];
    const int64_t some =
        cuts_.at(std::min(t1, cut), info.startNs)[on] - cuts_.at(t0, info.startNs)[on];
    if (perCpu->size() < cpuEvicted_.size()) perCpu->resize(cpuEvicted_.size(), 0);
    const double share = all > 0 ? double(some) / double(all) : 0;
    for (size_t c = 0; c < cpuEvicted_.size(); c++)
      (*perCpu)[c] +=
          some == all ? cpuEvicted_[c] : int64_t(std::llround(double(cpuEvicted_[c]) * share));
  }
  t0 = std::max(t0, cut);
  if (t1 > t0) detailCpuTimes(t0, t1, perCpu);
}

void ThreadTimeline::evictBefore(int64_t t) {
  if (!derived_) return;
  t = std::min({t, derivedUntil_, lifetime().t1});
  const int64_t from = std::max(info.startNs, evictedUntil());
  if (t <= from) return;
  StateTimes part;
  detailTimes(from, t, &part);
  cuts_.cut(t, part.ns);
  detailCpuTimes(from, t, &cpuEvicted_);
  // The interval going on at t now starts there; those before it go.
  const size_t keep = firstOverlapping(t);
  if (keep < iv_.size() && startOf(iv_[keep]) < t) {
    Packed &p = iv_[keep];
    const int64_t rel = std::clamp<int64_t>(t - base_, 0, kMaxRel);
    p.lo = uint32_t(rel);
    p.hi = (p.hi & 0xFFFF0000u) | uint32_t(rel >> 32);
  }
  iv_.erase(iv_.begin(), iv_.begin() + std::ptrdiff_t(std::min(keep, iv_.size())));
  if (iv_.capacity() > 2 * iv_.size() + 1024) iv_.shrink_to_fit();
  trimRaw(t);
}

size_t ThreadTimeline::bytes() const {
  return sizeof(*this) + iv_.capacity() * sizeof(Packed) +
         (trans_.capacity() + sw_.capacity()) * sizeof(Raw) + cuts_.bytes() +
         cpuEvicted_.capacity() * sizeof(int64_t) + splits_.capacity() * sizeof(TickSplit) +
         lwp.bytes() + lwpExtra.bytes();
}

}  // namespace tmon
