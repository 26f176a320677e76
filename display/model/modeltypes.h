// Value types the session model hands to its users (views, report, tests).
// QtCore only: no widget or GUI header may ever be included from model/.
// The namespace is tmon, not tm: a namespace tm clashes with libc's struct tm.
#ifndef THREADMON_MODELTYPES_H
#define THREADMON_MODELTYPES_H

#include <QString>
#include <QStringList>

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tmon {

// The final per-thread states, after combining interposed transitions,
// switch records and schedstat deltas (docs/format.md, "Final states").
// One list makes all of them, their keys, labels and colours: proto/states.def.
enum class FinalState : uint8_t {
#define TM_FINAL_STATE(name, ...) name,
#include "states.def"
#undef TM_FINAL_STATE
};
constexpr int kFinalStateCount = 0
#define TM_FINAL_STATE(...) +1
#include "states.def"
#undef TM_FINAL_STATE
    ;
// AsleepKind values of threadmon.proto (OTHER, CHILD, IO_EVENTS, READ,
// SIGNAL, SLEEP): what a thread asleep in a syscall waited for.
constexpr int kAsleepKinds = 6;

// "on_cpu", "runnable", "blocked_mutex", ... (the JSON and report keys).
const char *finalStateKey(FinalState s);
const char *finalStateShort(FinalState s);  // "cpu", "runq", "mutex", ...: column heads
const char *finalStateLabel(FinalState s);  // "On CPU", "Blocked: mutex", ...
uint32_t finalStateRgb(FinalState s);       // 0xRRGGBB, the same in every view
// The state shown in the text report's column col (0 .. kFinalStateCount-1).
FinalState finalStateAtColumn(int col);
// The final state of a wrapper's recorded threadmon.ThreadState (blocked
// kinds and sleeping); false for the others.
bool finalStateOfWire(int wireState, FinalState *out);
bool isBlockedState(FinalState s);
// The blocked state of a waiter on an object of this threadmon.SyncKind.
bool blockedStateOfKind(int syncKind, FinalState *out);
// The threadmon.ThreadState a wrapper records for a wait on this kind, or 0.
int blockedWireOfKind(int syncKind);

// threadmon.SyncKind's name: "mutex", "cond", ..., "internal" (proto/states.def).
QString syncKindName(int kind);
// A lock an owner holds (mutex, rwlock, spin): hold time and owners apply.
bool isHeldKind(int kind);
QString sourceName(int source);

// A closed-open span of session time, CLOCK_MONOTONIC ns of the probed machine.
struct TimeRange {
  int64_t t0 = 0;
  int64_t t1 = 0;
  int64_t length() const { return t1 > t0 ? t1 - t0 : 0; }
};

// What a view asks for; SessionModel::resolve() turns it into a TimeRange.
struct Window {
  enum Kind { Last, WholeRun, Range };
  Kind kind = WholeRun;
  int64_t lastNs = 0;  // Last: this much before the newest data
  TimeRange range;     // Range: absolute times
  static Window last(int64_t ns) { return Window{Last, ns, {}}; }
  static Window wholeRun() { return Window{WholeRun, 0, {}}; }
  static Window between(int64_t t0, int64_t t1) { return Window{Range, 0, {t0, t1}}; }
};

// A span in which the probe kept less detail than it was asked for (its
// CPU budget, THREADMON_BUDGET, or the switch-rate limit): switch records
// paused, states meanwhile split by each tick's /proc reads; or ticks at
// least 1.75 times the interval asked for apart. Every thread alive in it
// lost that detail.
struct DetailLoss {
  enum What : uint8_t { RecordsPaused, SlowTicks };
  What what = SlowTicks;
  int64_t fromNs = 0;
  int64_t toNs = -1;   // -1: not over when the data ends
  int64_t tickNs = 0;  // SlowTicks: the longest interval between ticks in it
  // Worth saying: a pause, or slow ticks for at least 100 ms (a tick or two
  // late on a loaded machine is not the budget's doing).
  bool shown() const { return what == RecordsPaused || toNs < 0 || toNs - fromNs >= 100000000; }
};
using DetailLosses = std::vector<DetailLoss>;
// Adds a span, joined to the last one of its kind when they touch; past
// limits::kMaxDetailLosses spans the last one of its kind grows instead.
void addDetailLoss(DetailLosses *v, const DetailLoss &d);
// How much of [t0, t1) lies in any of the spans shown (open ones end at t1).
int64_t detailLostNs(const DetailLosses &v, int64_t t0, int64_t t1);

// An exec seen from outside (threadmon.Exec): the session went on in the
// new image. from*: what the process ran until then.
struct ImageChange {
  int64_t timeNs = 0;
  QString fromExe, toExe;
  QStringList fromArgv, toArgv;
};

struct SessionInfo {
  bool helloSeen = false;
  uint32_t protocolVersion = 0;
  QString probeVersion;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t parentPid = 0;  // set when the session is a forked child
  QString exe;             // the image it runs: Hello's, or its last exec's (execs)
  QStringList argv;
  // Execs the session went on through, in order (at most
  // limits::kMaxNotices; later ones still change exe and argv).
  std::vector<ImageChange> execs;
  QString host;
  QString kernel;
  uint32_t cpuCount = 0;
  uint64_t tickIntervalNs = 0;
  std::vector<int> sources;  // threadmon.Source values
  QString token;
  int64_t startNs = 0;  // monotonic ns of the session start
  uint64_t startRealtimeNs = 0;
  uint32_t probeTid = 0;
  uint64_t sessionId = 0;

  bool ended = false;  // Goodbye seen, or the input ended (markEnded)
  bool goodbyeSeen = false;
  int64_t endNs = 0;
  int endReason = 0;  // threadmon.EndReason
  int32_t exitStatus = 0;
  uint64_t framesDropped = 0;
  uint64_t eventsDropped = 0;
  uint64_t eventsFolded = 0;  // state changes folded into counters (rings full)
  uint64_t switchesLost = 0;
  uint64_t switchesReceived = 0;
  int64_t switchesStoppedNs = -1;  // the probe closed its switch events here (rate limit)
  uint64_t lateEventsIgnored = 0;  // arrived after their period was settled
  QStringList notices;
  // The probe's CPU budget (THREADMON_BUDGET): how often it changed its
  // detail. Its latest step is the one notice of them kept in notices: the
  // ladder's state, not a log that would fill the banner and the cap.
  int detailSteps = 0;
  // Where the probe kept less detail (DetailLoss), in time order per kind.
  DetailLosses detailLost;
  int64_t firstSwitchNs = -1;  // the first switch record read (a window's: records resumed)
  // What the reader dropped or clamped from input it could not trust, one
  // line per kind with its count (FrameCheck).
  QStringList inputWarnings;
  // Notices readers act on (proto/tmnotices.h), kept past kMaxNotices: a
  // flight recorder's capture (its last window's waits, whole-run counters),
  // and a capture gap (its transitions lost, not its counters).
  bool flightRecorder = false;
  int64_t flightDetailFromNs = 0;  // where its kept detail begins (0: unsaid)
  bool captureGap = false;
  bool hasSource(int source) const;
  // Wrappers ran in the process (SOURCE_INTERPOSE, or an old stream that
  // lists no sources): acquisitions, hold times and every wait's start and
  // end are known. False for a session read from outside (SOURCE_ATTACH):
  // those figures are unknown, never 0 (docs/format.md).
  bool acquisitionsKnown() const;
};

// What a thread folded while its event ring was full (cumulative as of t):
// time per wire state (threadmon.ThreadState), indexed by its number, and changes.
constexpr int kWireStates = 0
#define TM_WIRE_STATE(...) +1
#include "states.def"
    ;
struct FoldPoint {
  int64_t t = 0;
  std::array<uint64_t, kWireStates> ns{};
  uint64_t changes = 0;
};

struct ThreadInfo {
  uint32_t tid = 0;
  QString name;
  QString startRoutine;
  uint32_t creatorTid = 0;
  bool probe = false;
  bool main = false;
  int64_t startNs = 0;  // ThreadStart, or first sight
  int64_t endNs = -1;   // ThreadEnd / EXITED, -1 while alive
  int policy = 0;
  int priority = 0;
  int nice = 0;
  std::vector<uint64_t> affinity;  // CPU bitmask, 64 CPUs a word; empty = all CPUs
  int attrChanges = 0;             // ThreadAttr frames: the program changed them
                                   // (or named the thread) this many times
  // Where its event ring overflowed (UNKNOWN transitions): its wrapped-call
  // states are estimates from the kernel's view after each, until the next.
  std::vector<int64_t> eventGaps;
  // Its folded totals, as sampled (empty: none): what its gaps held.
  std::vector<FoldPoint> folds;
};

// Time per final state of one thread inside a window. lifetimeNs is the part
// of the window in which the thread existed and its state is known.
struct StateTimes {
  std::array<int64_t, kFinalStateCount> ns{};
  int64_t lifetimeNs = 0;
  double percent(FinalState s) const {
    return lifetimeNs > 0 ? 100.0 * double(ns[size_t(s)]) / double(lifetimeNs) : 0.0;
  }
};

// One exact state interval for the timeline.
struct StateInterval {
  int64_t start = 0;
  int64_t end = 0;
  FinalState state = FinalState::Sleeping;
  uint32_t object = 0;  // sync object id for blocked states, else 0
  int cpu = -1;         // CPU for on_cpu intervals, -1 when unknown
};

// b goes on where a ends, in the same state, object and CPU: one run.
inline bool sameRun(const StateInterval &a, const StateInterval &b) {
  return a.end == b.start && a.state == b.state && a.object == b.object && a.cpu == b.cpu;
}

// A user thread (M:N: a context made with makecontext, switched to with
// swapcontext/setcontext; docs/format.md, "User threads").
struct UserThreadInfo {
  uint32_t id = 0;
  QString name;      // empty: none known
  QString function;  // given to makecontext, module!function+0xoff
  uint32_t creatorTid = 0;
  int64_t createdNs = INT64_MAX;  // makecontext, or first sight; INT64_MAX: neither yet
  int64_t doneNs = -1;            // its function returned or its context was made anew; -1: not known
  uint64_t contextAddress = 0, stackAddress = 0, stackSize = 0;
};

// Its name, else its function's name without module and offset.
QString userThreadName(const UserThreadInfo &u);

// A span a user thread spent on one LWP.
struct UserSpan {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t tid = 0;
};

// A user thread's time in a window: on an LWP, in that LWP's final states
// (onLwp.ns; onLwp.lifetimeNs: the part whose state is known), and
// dispatchable (switched out, ready for an LWP). lifetimeNs = the known
// on-LWP part + dispatchableNs.
struct UserThreadStates {
  StateTimes onLwp;
  int64_t onLwpNs = 0;  // all of it, known state or not
  int64_t dispatchableNs = 0;
  int64_t lifetimeNs = 0;
  std::vector<std::pair<uint32_t, int64_t>> lwpNs;  // tid -> ns on it, most first
  double percent(int64_t part) const {
    return lifetimeNs > 0 ? 100.0 * double(part) / double(lifetimeNs) : 0.0;
  }
};

// How proto/counters.def says a counter combines over a window, what it
// counts, and when the report knows it (else prints null).
enum class CounterMerge { Sum, Max };
enum class CounterUnit { Ns, Count };
enum class CounterKnown { Always, Counted, Held, Timed, Hardware };

// Cumulative per-LWP counters differenced over a window (negatives clamp
// to 0): one member for each of proto/counters.def's LWP counters kept.
struct LwpDelta {
#define TM_LWP_COUNTER(field, number, index, member, ...) uint64_t member = 0;
#define TM_LWP_EXTRA(field, number, index, member, ...) uint64_t member = 0;
#include "counters.def"
  int64_t sleepNs = 0;  // lifetime in window minus on-CPU and run-queue time
  // Between the two readings differenced (the later one may be read a while
  // after its tick on a loaded machine), or from the thread's start.
  int64_t readSpanNs = 0;
};
// The counters between two cumulative readings (to less from), clamped to
// 0; sleepNs and readSpanNs are left 0.
LwpDelta lwpBetween(const LwpDelta &from, const LwpDelta &to);

// /proc/stat times of one CPU differenced over a window, ns: one member for
// each of proto/counters.def's CPU counters.
struct CpuDelta {
#define TM_CPU_COUNTER(field, number, member, ...) uint64_t member = 0;
#include "counters.def"
  uint64_t total() const {
    return 0
#define TM_CPU_COUNTER(field, number, member, ...) +member
#include "counters.def"
        ;
  }
};
constexpr int kCpuCounters = 0
#define TM_CPU_COUNTER(...) +1
#include "counters.def"
    ;

struct ThreadCpuTime {
  int thread = 0;  // thread index in the model
  int64_t ns = 0;
};

struct SyncObjectInfo {
  uint32_t id = 0;
  int kind = 0;  // threadmon.SyncKind
  uint64_t address = 0;
  QString module;
  QString symbol;     // readable (demangled), without offset: "lock_a", "app::queue"
  QString symbolRaw;  // as in the module's symbol table (mangled)
  uint64_t symbolOffset = 0;
  QString symbolFile;  // the source file of a local whose name is not unique, else ""
  // The member of the global symbol it is, by the debug information:
  // ".users.lock", "[3]"; "" when it is the global itself or unknown
  // (sourcelines.h, sourceGlobalMember).
  QString symbolMember;
  int64_t firstSeenNs = 0;
  QStringList firstContentionStack;  // innermost first
  uint32_t flags = 0;
  // KIND_INTERNAL words the program's own runtime made (runtimesync.h):
  // the kind it acts as (0: a library's hidden lock) and what it is.
  int runtimeKind = 0;
  QString runtimeWhat;
  // Where the program made it: its initialiser call (pthread_mutex_init,
  // sem_init ...) as a frame, "prog!make_table+0x1c (db.c:40)"; "" when the
  // probe saw none (a static initialiser, an older probe, read from outside).
  QString madeAt;
  // The struct member it is, by the debug information at madeAt:
  // "table->lock"; "" when unknown (sourcelines.h, sourceMember).
  QString madeMember;
  QString callSite() const;  // innermost frame of the first contention stack
  // "symbol+0x10 (file.c)", the offset left out when 0, "tables.users.lock"
  // for a member known by the debug information; "" without a symbol.
  QString symbolText() const;
  // The name a person uses, without the kind, the one rule for the report,
  // JSON, views and exports (docs/report-json.md, "name"): a global's symbol
  // ("lock_a", "tables+0x40"); else where the program made it, "made in
  // make_table (db.c:40)", after the member it is when known, "table->lock
  // made in make_table (db.c:40)"; else where it was first contended, "first used in
  // worker (db.c:55)"; else its address, "0x5641c6222a0".
  QString name() const;
  enum class NamedBy { Symbol, MadeAt, FirstUse, Address };
  NamedBy namedBy() const;
};

// A call site's frame as a person reads it: "make_table (db.c:40)", the
// function and its source line (the program's own line of library code
// inlined into it); without a line "make_table in prog"; "" for "".
struct SiteName {
  QString function, module, file;  // module and file: base names
  int line = 0;                    // 0 = unknown
  QString text() const;
};
SiteName siteName(const QString &frame);

// An object's counters over a window: one member for each of
// proto/counters.def's sync counters.
struct SyncDelta {
#define TM_SYNC_COUNTER(field, number, index, member, ...) uint64_t member = 0;
#include "counters.def"
  bool maxWaitInWindow = false;  // maxWaitNs, the maximum up to the window's end, was set inside it
};
// The counters between two cumulative readings: a Sum counter's difference
// (clamped to 0), a Max counter's newest value.
SyncDelta syncBetween(const SyncDelta &from, const SyncDelta &to);

struct BlockedInterval {
  int thread = 0;  // thread index
  int64_t start = 0;
  int64_t end = 0;
  FinalState state = FinalState::BlockedMutex;
};

// One wait on a sync object as the interposer saw it (a blocking call from
// its start to its end). holder: the owner when the wait began (mutex,
// rwlock); releaser: the thread whose unlock/signal/post/arrival ended it.
// 0 = unknown. An open wait (still blocked) ends at the newest settled time.
struct WaitRecord {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t waiter = 0;  // tid
  uint32_t object = 0;  // sync object id
  uint32_t holder = 0;
  uint32_t releaser = 0;
  FinalState state = FinalState::BlockedMutex;
  bool open = false;
  // Waits this record stands for: 1, or (a live model's waits that left
  // RAM, SyncActivity::evictBefore) all of one waiter's closed waits for
  // one holder and releaser, end - start their summed time.
  uint32_t count = 1;
  // Who the waiter waited for: the holder, or for cond/sem/barrier/join
  // (no owner) the releaser.
  uint32_t blamed() const { return holder ? holder : releaser; }
};

// One cell of the waiter x holder matrix over a window: waits by `waiter`
// that `holder` caused (count of waits that began in the window, wait time
// clipped to it). holder 0 = unknown.
struct WaitPair {
  uint32_t waiter = 0;  // tid
  uint32_t holder = 0;  // tid
  uint64_t count = 0;
  uint64_t waitNs = 0;
};
// Cells of a waiter x holder table being summed, hashed by pair: a std::map's
// compares, one descent per wait, were a tenth of a streamed report's CPU.
using WaitCells = std::unordered_map<uint64_t, WaitPair>;
WaitPair &waitCell(WaitCells *cells, uint32_t waiter, uint32_t holder);
// The pairs that waited at all, longest wait first (then most waits, then
// by waiter and holder): the order every who-blocks-whom table uses.
std::vector<WaitPair> sortedWaitPairs(const WaitCells &cells);
// Pairs summed elsewhere put in that order.
void sortWaitPairs(std::vector<WaitPair> *pairs);

// One object's waits over a range, summed where they lie
// (SyncActivity::waitSums): what waits() and matrix() say of it, in one
// pass and in no order, for a caller that only adds them up.
struct WaitSums {
  std::vector<std::pair<uint32_t, int64_t>> waiters;  // each waiter's ns in the range, by tid
  uint64_t pieces = 0;                                // the waits (records) summed
  std::vector<WaitPair> cells;                        // matrix()'s, in no order
  int64_t recorded = 0, unfinished = 0;               // closed waits' ns; open ones'
  int64_t blamed = 0;                                 // all but a barrier's self-release
  uint64_t count = 0;                                 // closed waits (WaitRecord::count)
};

// The one frame of the probe's stack for waits it did not unwind (over its
// unwind rate, or a hidden lock's stack it could not read): no call site.
inline const QString &notUnwoundFrame() {
  static const QString f = QStringLiteral("[not unwound]");
  return f;
}

// Contention of one object through one interned call stack, window deltas.
struct CallSite {
  uint32_t stackId = 0;
  QStringList frames;  // the program's own call site first, outermost last
  uint64_t contentions = 0;  // internal locks: samples
  uint64_t waitNs = 0;       // internal locks: samples x tick interval
  bool unwound() const {
    return !frames.isEmpty() && !(frames.size() == 1 && frames.front() == notUnwoundFrame());
  }
};

// The busiest site of sites (sorted busiest first) that names a place in
// the program: the waits that were not unwound say nothing of where they
// came from, however many they are. Null when none was unwound.
inline const CallSite *busiestUnwound(const std::vector<CallSite> &sites) {
  for (const CallSite &c : sites)
    if (c.unwound()) return &c;
  return nullptr;
}

// A thread seen blocked in futex() on a KIND_INTERNAL object's word,
// estimated wait = ticks seen x tick interval.
struct InternalWaiter {
  uint32_t tid = 0;
  uint64_t samples = 0;   // ticks it was seen blocked on the word
  uint64_t waitNs = 0;    // estimated time asleep on it
  uint64_t kernelNs = 0;  // estimated system CPU time spent in calls for it
  // Never caught asleep at all, but runs the function of threads that were
  // seen on it: charged by inference (SessionModel::internalWaiters).
  bool inferred = false;
};

// One thread's inputs to the estimate of its waits on a hidden lock over a
// span, each a sum over the span (a streamed report adds up its windows'):
// SessionModel::internalWaiters.
struct HiddenInputs {
  uint32_t tid = 0;
  QString routine;        // its start routine: its pool shares the lock's rate
  uint64_t seen = 0;      // ticks that saw it blocked on the lock's word
  uint64_t asleep = 0;    // ticks that saw it asleep outside wrapped calls
  int64_t sleepNs = 0;    // asleep outside wrapped calls
  uint64_t systemNs = 0;  // its LWP's system CPU time
  uint64_t volCtxsw = 0;  // its voluntary context switches
};

// The waits on one hidden lock (most lost first) from the inputs of the
// threads seen on it (seen > 0) and of the others of their pools (a lock
// not a runtime's own: runtimeOwn false), each seen thread's share of its
// sleeps the share of its pool's sleeping ticks that saw it on the word
// (tickNs 0: the probe's default interval).
std::vector<InternalWaiter> estimateHiddenWaits(const std::vector<HiddenInputs> &threads,
                                                bool runtimeOwn, uint64_t tickNs);

// A cycle in the wait-for graph: threads[i] waits on objects[i], which
// threads[(i+1) % n] holds. formedNs: when the last of its waits began;
// resolvedNs: when the first of them ended, -1 while it lasts.
struct Deadlock {
  std::vector<uint32_t> threads;  // tids, smallest first, then cycle order
  std::vector<uint32_t> objects;  // sync object ids
  int64_t formedNs = 0;
  int64_t detectedNs = 0;  // the tick at which the model first saw it
  int64_t resolvedNs = -1;
  bool live() const { return resolvedNs < 0; }
};

// One chart point per tick, computed from the tick's cumulative deltas.
struct TickPoint {
  int64_t t = 0;
  float runqueueThreads = 0; // average threads waiting on a run queue
  uint16_t threadsInR = 0;   // threads whose /proc state letter was R
  uint32_t contentions = 0;  // contended acquisitions in the tick
  uint64_t waitNs = 0;       // time spent waiting on sync objects in the tick
};

}  // namespace tmon

#endif
