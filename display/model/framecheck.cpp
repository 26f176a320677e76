#include "framecheck.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "modeltypes.h"

namespace tmon {

namespace {

// Keeps the entries i with keep[i], in order. A column shorter than the
// batch (an optional one an older probe did not send) keeps its prefix's
// share; a longer one loses its extra entries, which name no entry.
template <typename T>
void compact(T *col, size_t *n, const std::vector<char> &keep) {
  const size_t len = std::min(*n, keep.size());
  size_t k = 0;
  for (size_t i = 0; i < len; i++)
    if (keep[i]) col[k++] = col[i];
  *n = k;
}

// Entry i's time is base + delta[0] + ... + delta[i]. After compaction the
// kept entries are re-based on the first of them, so the store's running
// sum gives each its time again.
void rebase(uint64_t *base, int64_t *delta, const std::vector<int64_t> &times) {
  if (times.empty()) return;
  *base = uint64_t(times[0]);
  delta[0] = 0;
  for (size_t i = 1; i < times.size(); i++) delta[i] = times[i] - times[i - 1];
}

template <typename E>
void setEnum(E *v, int x) {
  std::memcpy(v, &x, sizeof x);
}

bool knownState(int s) {
  return s >= THREADMON__THREAD_STATE__STATE_UNKNOWN && s < kWireStates;  // states.def's
}

bool knownUserSwitch(int k) {
  return k >= THREADMON__USER_SWITCH_KIND__USER_SWITCH &&
         k <= THREADMON__USER_SWITCH_KIND__USER_LOST;
}

bool knownSwitch(int k) {
  return k >= THREADMON__SWITCH_KIND__SWITCH_IN && k <= THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT;
}

}  // namespace

template <typename T, typename Ok>
void FrameCheck::keepIf(T **items, size_t *n, Ok &&ok) {
  std::vector<T *> kept, dropped;
  for (size_t i = 0; i < *n; i++) (ok(items[i]) ? kept : dropped).push_back(items[i]);
  if (dropped.empty()) return;
  std::copy(kept.begin(), kept.end(), items);
  std::copy(dropped.begin(), dropped.end(), items + kept.size());
  shorten(n, kept.size());
}

void FrameCheck::shorten(size_t *n, size_t to) {
  shortened_.emplace_back(n, *n);
  *n = to;
}

void FrameCheck::restore() {
  for (auto it = shortened_.rbegin(); it != shortened_.rend(); ++it) *it->first = it->second;
  shortened_.clear();
}

void FrameCheck::note(Issue issue, uint64_t n) {
  if (n == 0) return;
  counts_[size_t(issue)] += n;
  changed_ = true;
}

bool FrameCheck::takeChanged() {
  bool c = changed_;
  changed_ = false;
  return c;
}

QStringList FrameCheck::lines() const {
  // "%1" is the count; each line says what the reader did with the input.
  static const char *const what[kIssues] = {
      "dropped %1 records timed outside the session (78 hours from its first time, before "
      "2^58 ns)",
      "took %1 CPU numbers outside 0-4094 as unknown",
      "clamped %1 counters above 2^58",
      "read %1 enum values this reader does not know as unknown (switch records dropped)",
      "dropped %1 records of thread or object id 0",
      "dropped %1 batch entries without a thread or time",
      "clamped %1 Hello values (CPU count over 4095, tick interval over 60 s)",
      "cut %1 strings or lists over their limits (4096 bytes, 256 items)",
      "dropped %1 records of threads past the first 65536",
      "dropped %1 records of sync objects past the first 65536",
      "dropped %1 call stacks or call sites past their limits",
      "dropped %1 probe notices past the first 64",
      "dropped %1 records of a thread at an instant it already had 16 records at",
  };
  QStringList out;
  for (int i = 0; i < kIssues; i++)
    if (counts_[size_t(i)]) out << QString::fromLatin1(what[i]).arg(counts_[size_t(i)]);
  return out;
}

// Inline: asked for every record (the model is built -fPIC, where a
// function defined out of line is never inlined).
inline bool FrameCheck::time(uint64_t wire, int64_t *out) {
  if (wire > limits::kMaxTimeNs) return false;
  const int64_t t = int64_t(wire);
  if (lo_ == INT64_MIN) lo_ = std::max<int64_t>(0, t - limits::kBeforeFirstNs);
  if (t < lo_ || t - lo_ > limits::kWindowNs) return false;
  *out = t;
  return true;
}

void FrameCheck::optionalTime(uint64_t *wire) {
  int64_t t;
  if (*wire && !time(*wire, &t)) {
    *wire = 0;
    note(TimeOutside);
  }
}

// Inline: asked for every counter of every sample (a call each was a
// fifth of checking a tick).
inline uint64_t FrameCheck::counter(uint64_t v) {
  if (v <= limits::kMaxCounter) return v;
  note(CounterClamped);
  return limits::kMaxCounter;
}

void FrameCheck::cut(char *s) {
  if (!s) return;
  const size_t len = strnlen(s, limits::kMaxStringBytes + 1);
  if (len <= limits::kMaxStringBytes) return;
  // Not inside a UTF-8 sequence: back up over its continuation bytes.
  size_t at = limits::kMaxStringBytes;
  while (at > 0 && (uint8_t(s[at]) & 0xC0) == 0x80) at--;
  s[at] = '\0';
  note(StringCut);
}

void FrameCheck::cutLocations(Threadmon__CodeLocation **items, size_t *n) {
  if (*n > limits::kMaxListItems) {
    *n = limits::kMaxListItems;
    note(StringCut);
  }
  for (size_t i = 0; i < *n; i++) {
    cut(items[i]->module_path);
    // A GNU build-id is 20 bytes (SHA-1); any longer is no build-id.
    if (items[i]->build_id.len > limits::kMaxBuildIdBytes) {
      items[i]->build_id.len = 0;
      note(StringCut);
    }
  }
}

void FrameCheck::cutList(char **items, size_t *n) {
  if (*n > limits::kMaxListItems) {
    shorten(n, limits::kMaxListItems);
    note(StringCut);
  }
  for (size_t i = 0; i < *n; i++) cut(items[i]);
}

bool FrameCheck::check(Threadmon__Frame *f) {
  int64_t t;
  switch (f->body_case) {
    case THREADMON__FRAME__BODY_HELLO: return f->hello && checkHello(f->hello);
    case THREADMON__FRAME__BODY_GOODBYE:
      if (!f->goodbye) return false;
      optionalTime(&f->goodbye->time_ns);
      f->goodbye->frames_dropped = counter(f->goodbye->frames_dropped);
      f->goodbye->events_dropped = counter(f->goodbye->events_dropped);
      f->goodbye->bytes_written = counter(f->goodbye->bytes_written);
      if (wireEnum(&f->goodbye->reason) < 0) {
        setEnum(&f->goodbye->reason, THREADMON__END_REASON__END_UNSPECIFIED);
        note(BadEnum);
      }
      return true;
    case THREADMON__FRAME__BODY_TICK: return f->tick && checkTick(f->tick);
    case THREADMON__FRAME__BODY_THREAD_START: {
      Threadmon__ThreadStart *s = f->thread_start;
      if (!s) return false;
      if (!s->tid) {
        note(BadId);
        return false;
      }
      if (!time(s->time_ns, &t)) {
        note(TimeOutside);
        return false;
      }
      cut(s->name);
      cut(s->start_routine);
      return true;
    }
    case THREADMON__FRAME__BODY_THREAD_END: {
      Threadmon__ThreadEnd *e = f->thread_end;
      if (!e) return false;
      if (!e->tid) {
        note(BadId);
        return false;
      }
      if (!time(e->time_ns, &t)) {
        note(TimeOutside);
        return false;
      }
      e->oncpu_ns = counter(e->oncpu_ns);
      e->yields = counter(e->yields);
      e->folded_changes = counter(e->folded_changes);
      for (size_t i = 0; i < e->n_folded_ns; i++) e->folded_ns[i] = counter(e->folded_ns[i]);
      return true;
    }
    case THREADMON__FRAME__BODY_THREAD_ATTR: {
      Threadmon__ThreadAttr *a = f->thread_attr;
      if (!a) return false;
      if (!a->tid) {
        note(BadId);
        return false;
      }
      if (!time(a->time_ns, &t)) {
        note(TimeOutside);
        return false;
      }
      cut(a->name);
      return true;
    }
    case THREADMON__FRAME__BODY_SYNC_OBJECT:
      return f->sync_object && checkSyncObject(f->sync_object);
    case THREADMON__FRAME__BODY_TRANSITIONS:
      return f->transitions && checkTransitions(f->transitions);
    case THREADMON__FRAME__BODY_SWITCHES: return f->switches && checkSwitches(f->switches);
    case THREADMON__FRAME__BODY_STACK:
      if (!f->stack) return false;
      cutList(f->stack->frames, &f->stack->n_frames);
      cutLocations(f->stack->locations, &f->stack->n_locations);
      return true;
    case THREADMON__FRAME__BODY_NOTICE:
      if (!f->notice) return false;
      cut(f->notice->text);
      return true;
    case THREADMON__FRAME__BODY_EXEC:
      if (!f->exec) return false;
      if (!time(f->exec->time_ns, &t)) {
        note(TimeOutside);
        return false;
      }
      cut(f->exec->exe);
      cutList(f->exec->argv, &f->exec->n_argv);
      return true;
    case THREADMON__FRAME__BODY_USER_THREAD: {
      Threadmon__UserThread *u = f->user_thread;
      if (!u) return false;
      if (!u->id || u->id > limits::kMaxUserThreadId) {
        note(BadId);
        return false;
      }
      optionalTime(&u->time_ns);
      cut(u->function);
      cut(u->name);
      return true;
    }
    case THREADMON__FRAME__BODY_USER_SWITCHES:
      return f->user_switches && checkUserSwitches(f->user_switches);
    default: return true;  // a body this reader does not know: the store ignores it
  }
}

bool FrameCheck::checkHello(Threadmon__Hello *h) {
  optionalTime(&h->start_monotonic_ns);
  if (h->cpu_count > uint32_t(limits::kMaxCpus)) {
    h->cpu_count = uint32_t(limits::kMaxCpus);
    note(HelloClamped);
  }
  if (h->tick_interval_ns > limits::kMaxTickIntervalNs) {
    h->tick_interval_ns = 0;  // unknown: the readers' default
    note(HelloClamped);
  }
  cut(h->probe_version);
  cut(h->exe);
  cut(h->host);
  cut(h->kernel);
  cut(h->token);
  cutList(h->argv, &h->n_argv);
  if (h->n_sources > limits::kMaxListItems) {
    h->n_sources = limits::kMaxListItems;
    note(StringCut);
  }
  // A source this reader does not know is named by its number; only one
  // the type cannot hold goes.
  std::vector<char> keep(h->n_sources);
  for (size_t i = 0; i < h->n_sources; i++) keep[i] = wireEnum(&h->sources[i]) >= 0;
  note(BadEnum, size_t(std::count(keep.begin(), keep.end(), 0)));
  compact(h->sources, &h->n_sources, keep);
  return true;
}

bool FrameCheck::checkLwp(Threadmon__LwpSample *s) {
  if (!s->tid) {
    note(BadId);
    return false;
  }
  // -1 is how a reader says "unknown" (lwpAux); anything else out of range
  // is damage.
  if (s->cpu != -1 && (s->cpu < 0 || s->cpu >= limits::kMaxCpus)) {
    s->cpu = -1;
    note(CpuOutOfRange);
  }
  for (uint64_t *c : {
#define TM_LWP_COUNTER(field, ...) &s->field,
#define TM_LWP_EXTRA(field, ...) &s->field,
#define TM_LWP_UNKEPT(field, ...) &s->field,
#include "counters.def"
       })
    *c = counter(*c);
  optionalTime(&s->read_ns);
  for (size_t i = 0; i < s->n_folded_ns; i++) s->folded_ns[i] = counter(s->folded_ns[i]);
  const int kind = wireEnum(&s->asleep_kind);
  if (kind < THREADMON__ASLEEP_KIND__ASLEEP_OTHER || kind > THREADMON__ASLEEP_KIND__ASLEEP_SLEEP) {
    setEnum(&s->asleep_kind, THREADMON__ASLEEP_KIND__ASLEEP_OTHER);
    note(BadEnum);
  }
  return true;
}

bool FrameCheck::checkTick(Threadmon__Tick *tk) {
  int64_t t;
  if (!time(tk->time_ns, &t)) {
    note(TimeOutside);
    return false;
  }
  if (Threadmon__ProbeStats *p = tk->probe) {
    for (uint64_t *v : {&p->events_dropped, &p->frames_dropped, &p->bytes_sent, &p->sampler_cpu_ns,
                        &p->events_folded})
      *v = counter(*v);
  }
  keepIf(tk->lwps, &tk->n_lwps, [this](Threadmon__LwpSample *s) { return checkLwp(s); });
  keepIf(tk->cpus, &tk->n_cpus, [this](Threadmon__CpuSample *c) {
    if (c->cpu >= uint32_t(limits::kMaxCpus)) {
      note(CpuOutOfRange);
      return false;
    }
    for (uint64_t *v : {
#define TM_CPU_COUNTER(field, ...) &c->field,
#include "counters.def"
         })
      *v = counter(*v);
    return true;
  });
  keepIf(tk->sync, &tk->n_sync, [this](Threadmon__SyncStats *s) {
    if (!s->id) {
      note(BadId);
      return false;
    }
    for (uint64_t *v : {
#define TM_SYNC_COUNTER(field, ...) &s->field,
#include "counters.def"
         })
      *v = counter(*v);
    return true;
  });
  keepIf(tk->sites, &tk->n_sites, [this](Threadmon__SiteStats *s) {
    if (!s->object_id) {
      note(BadId);
      return false;
    }
    s->contentions = counter(s->contentions);
    s->wait_ns = counter(s->wait_ns);
    return true;
  });
  return true;
}

bool FrameCheck::checkSyncObject(Threadmon__SyncObject *o) {
  if (!o->id) {
    note(BadId);
    return false;
  }
  optionalTime(&o->first_seen_ns);
  if (wireEnum(&o->kind) < 0) {
    setEnum(&o->kind, THREADMON__SYNC_KIND__KIND_UNKNOWN);
    note(BadEnum);
  }
  cut(o->module);
  cut(o->symbol);
  cutList(o->first_contention_stack, &o->n_first_contention_stack);
  cutLocations(o->first_contention_locations, &o->n_first_contention_locations);
  cut(o->made_at);
  if (o->made_at_location) {
    Threadmon__CodeLocation *made[1] = {o->made_at_location};
    size_t one = 1;
    cutLocations(made, &one);
  }
  return true;
}

namespace {

// What keepsAll needs of a batch's n entries: the OR and the sum of their
// deltas, and whether a tid is 0 or one of the first `states` states
// unknown.
struct BatchScan {
  uint64_t anyBits = 0, total = 0;
  bool bad = false;
};

// Eight entries a round, their deltas, tids and states in one pass (three
// passes were three loops' tests and counters per entry), in 32-byte
// vectors: AVX2's where the CPU has it (a clone for each, chosen once when
// the program loads), else two SSE2 registers each (GCC's -O2 does not
// vectorize these loops itself).
#if defined(__x86_64__) && defined(__GNUC__)
#define THREADMON_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define THREADMON_AVX2_CLONE
#endif
THREADMON_AVX2_CLONE BatchScan scanBatch(
    const int64_t *delta, const uint32_t *tid, const void *state, size_t n, size_t states) {
  typedef uint64_t Quad __attribute__((vector_size(32)));
  typedef uint32_t Octet __attribute__((vector_size(32)));
  typedef int32_t Flags __attribute__((vector_size(32)));
  Quad ored = {}, summed = {}, ored2 = {}, summed2 = {};
  Flags bad = {};
  auto deltasAndTids = [&](size_t at) {
    Quad d, d2;
    std::memcpy(&d, delta + at, sizeof d);
    std::memcpy(&d2, delta + at + 4, sizeof d2);
    ored |= d;
    summed += d;
    ored2 |= d2;
    summed2 += d2;
    Octet v;
    std::memcpy(&v, tid + at, sizeof v);
    bad |= v == 0;
  };
  size_t i = 0;
  for (; i + 8 <= states; i += 8) {
    deltasAndTids(i);
    Octet w;
    std::memcpy(&w, static_cast<const char *>(state) + 4 * i, sizeof w);
    bad |= w >= uint32_t(kWireStates);
  }
  const size_t statesDone = i;
  for (; i + 8 <= n; i += 8) deltasAndTids(i);
  ored |= ored2;
  summed += summed2;
  BatchScan scan;
  for (unsigned k = 0; k < 4; k++) {
    scan.anyBits |= ored[k];
    scan.total += summed[k];
  }
  int odd = 0;
  for (unsigned k = 0; k < 8; k++) odd |= bad[k];
  for (; i < n; i++) {
    scan.anyBits |= uint64_t(delta[i]);
    scan.total += uint64_t(delta[i]);
    odd |= tid[i] == 0;
  }
  for (i = statesDone; i < states; i++) {
    uint32_t w;  // an enum, as protobuf-c stores it (an int)
    std::memcpy(&w, static_cast<const char *>(state) + 4 * i, sizeof w);
    odd |= w >= uint32_t(kWireStates);
  }
  scan.bad = odd != 0;
  return scan;
}

}  // namespace

// Whether every one of the batch's first n entries is kept as it is: its
// running sum never overflows and stays inside the window set before (the
// first time of a session takes the loop below, which sets it), no tid is
// 0 and every state is known. No branch per entry: the times' distance
// from the window's start is compared once, at the end, and the deltas,
// ids and states are read eight at a time (scanBatch).
bool FrameCheck::keepsAll(const Threadmon__Transitions *tr, size_t n) const {
  if (n == 0 || lo_ == INT64_MIN || tr->base_ns > uint64_t(INT64_MAX)) return false;
  // time()'s test: lo_ <= t <= both limits, as one unsigned distance.
  const uint64_t room =
      std::min<uint64_t>(uint64_t(limits::kWindowNs), limits::kMaxTimeNs - uint64_t(lo_));
  // The sum kept from the window's start: an entry whose distance
  // overflows here, or is out of room, sends the batch to the exact loop.
  int64_t u = int64_t(tr->base_ns) - lo_, next = 0;
  uint64_t farthest = 0, farthest2 = 0;
  bool over = false;
  size_t i = 0;
  // Nearly always no delta is negative (the probe's records are in time
  // order), nor 2^40 or more: from a base inside the window no partial sum
  // of at most 2^22 of them overflows, and the last entry is the farthest.
  // Their sum and their OR, read eight at a time, say so (the loop below,
  // an add with an overflow test and a max per entry, was 8 instructions
  // an entry).
  static_assert(sizeof *tr->state == sizeof(int32_t), "protobuf-c stores enums as int");
  static_assert(THREADMON__THREAD_STATE__STATE_UNKNOWN == 0, "known states are 0..kWireStates-1");
  const BatchScan scan =
      scanBatch(tr->delta_ns, tr->tid, tr->state, n, std::min(n, tr->n_state));
  const uint64_t anyBits = scan.anyBits, total = scan.total;
  constexpr uint64_t kSmallDelta = uint64_t(1) << 40;
  if (anyBits < kSmallDelta && n <= (size_t(1) << 22) && u >= 0 && uint64_t(u) <= room) {
    farthest = uint64_t(u) + total;
  } else {
    for (i = 0; i + 2 <= n; i += 2) {
      over |= __builtin_add_overflow(u, tr->delta_ns[i], &u);
      farthest = std::max(farthest, uint64_t(u));
      over |= __builtin_add_overflow(u, tr->delta_ns[i + 1], &next);
      farthest2 = std::max(farthest2, uint64_t(next));
      u = next;
    }
    if (i < n) {
      over |= __builtin_add_overflow(u, tr->delta_ns[i], &u);
      farthest = std::max(farthest, uint64_t(u));
    }
    farthest = std::max(farthest, farthest2);
  }
  return !over && farthest <= room && !scan.bad;
}

bool FrameCheck::checkTransitions(Threadmon__Transitions *tr) {
  const size_t n = std::min(tr->n_tid, tr->n_delta_ns);
  note(RaggedBatch, std::max(tr->n_tid, tr->n_delta_ns) - n);
  // Nearly every batch keeps all its entries: checked in one pass without
  // the lists below (a vector of flags and one of times per batch, and six
  // columns copied onto themselves, were a third of the check's cost).
  size_t i = 0;
  if (keepsAll(tr, n)) {
    i = n;
  } else {
    bool summed = tr->base_ns <= uint64_t(INT64_MAX);
    int64_t t = summed ? int64_t(tr->base_ns) : 0;
    for (; i < n; i++) {
      summed = summed && !__builtin_add_overflow(t, tr->delta_ns[i], &t);
      int64_t at;
      if (!summed || !time(uint64_t(t), &at) || !tr->tid[i]) break;
      if (i < tr->n_state && !knownState(wireEnum(&tr->state[i]))) {
        setEnum(&tr->state[i], THREADMON__THREAD_STATE__STATE_UNKNOWN);
        note(BadEnum);
      }
    }
  }
  if (i == n) {
    // What the compaction and the re-basing below make of such a batch:
    // columns no longer than the batch, its first entry's time the base.
    tr->n_tid = tr->n_delta_ns = n;
    for (size_t *col : {&tr->n_state, &tr->n_object_id, &tr->n_holder_tid, &tr->n_releaser_tid})
      *col = std::min(*col, n);
    if (n) {
      tr->base_ns += uint64_t(tr->delta_ns[0]);
      tr->delta_ns[0] = 0;
    }
    return true;
  }
  // Some entries go (the states fixed above stay fixed, and are not
  // counted twice: they read as known now).
  std::vector<char> keep(n, 0);
  std::vector<int64_t> times;
  // Past an overflow of the running sum no entry has a time.
  bool summed = tr->base_ns <= uint64_t(INT64_MAX);
  int64_t t = summed ? int64_t(tr->base_ns) : 0;
  for (i = 0; i < n; i++) {
    summed = summed && !__builtin_add_overflow(t, tr->delta_ns[i], &t);
    int64_t at;
    if (!summed || !time(uint64_t(t), &at)) {
      note(TimeOutside);
    } else if (!tr->tid[i]) {
      note(BadId);
    } else {
      keep[i] = 1;
      times.push_back(t);
      if (i < tr->n_state && !knownState(wireEnum(&tr->state[i]))) {
        setEnum(&tr->state[i], THREADMON__THREAD_STATE__STATE_UNKNOWN);
        note(BadEnum);
      }
    }
  }
  tr->n_tid = tr->n_delta_ns = n;
  compact(tr->tid, &tr->n_tid, keep);
  compact(tr->delta_ns, &tr->n_delta_ns, keep);
  compact(tr->state, &tr->n_state, keep);
  compact(tr->object_id, &tr->n_object_id, keep);
  compact(tr->holder_tid, &tr->n_holder_tid, keep);
  compact(tr->releaser_tid, &tr->n_releaser_tid, keep);
  rebase(&tr->base_ns, tr->delta_ns, times);
  return true;
}

bool FrameCheck::checkSwitches(Threadmon__CpuSwitches *sw) {
  const size_t n = std::min({sw->n_tid, sw->n_delta_ns, sw->n_cpu});
  note(RaggedBatch, std::max({sw->n_tid, sw->n_delta_ns, sw->n_cpu}) - n);
  std::vector<char> keep(n, 0);
  std::vector<int64_t> times;
  bool summed = sw->base_ns <= uint64_t(INT64_MAX);
  int64_t t = summed ? int64_t(sw->base_ns) : 0;
  for (size_t i = 0; i < n; i++) {
    summed = summed && !__builtin_add_overflow(t, sw->delta_ns[i], &t);
    int64_t at;
    if (!summed || !time(uint64_t(t), &at)) {
      note(TimeOutside);
    } else if (!sw->tid[i]) {
      note(BadId);
    } else if (i < sw->n_kind && !knownSwitch(wireEnum(&sw->kind[i]))) {
      note(BadEnum);
    } else {
      keep[i] = 1;
      times.push_back(t);
      if (sw->cpu[i] >= uint32_t(limits::kMaxCpus)) {
        sw->cpu[i] = UINT32_MAX;  // unknown
        note(CpuOutOfRange);
      }
    }
  }
  sw->n_tid = sw->n_delta_ns = sw->n_cpu = n;
  compact(sw->tid, &sw->n_tid, keep);
  compact(sw->delta_ns, &sw->n_delta_ns, keep);
  compact(sw->cpu, &sw->n_cpu, keep);
  compact(sw->kind, &sw->n_kind, keep);
  rebase(&sw->base_ns, sw->delta_ns, times);
  sw->lost = counter(sw->lost);
  // The base of a batch whose entries all went: the store still uses it
  // when the batch says the probe stopped its records.
  if (times.empty()) optionalTime(&sw->base_ns);
  return true;
}

bool FrameCheck::checkUserSwitches(Threadmon__UserSwitches *us) {
  const size_t n = std::min(us->n_tid, us->n_delta_ns);
  note(RaggedBatch, std::max(us->n_tid, us->n_delta_ns) - n);
  std::vector<char> keep(n, 0);
  std::vector<int64_t> times;
  bool summed = us->base_ns <= uint64_t(INT64_MAX);
  int64_t t = summed ? int64_t(us->base_ns) : 0;
  for (size_t i = 0; i < n; i++) {
    summed = summed && !__builtin_add_overflow(t, us->delta_ns[i], &t);
    int64_t at;
    if (!summed || !time(uint64_t(t), &at)) {
      note(TimeOutside);
    } else if (!us->tid[i] || (i < us->n_from_id && us->from_id[i] > limits::kMaxUserThreadId) ||
               (i < us->n_to_id && us->to_id[i] > limits::kMaxUserThreadId)) {
      note(BadId);
    } else if (i < us->n_kind && !knownUserSwitch(wireEnum(&us->kind[i]))) {
      note(BadEnum);
    } else {
      keep[i] = 1;
      times.push_back(t);
    }
  }
  us->n_tid = us->n_delta_ns = n;
  compact(us->tid, &us->n_tid, keep);
  compact(us->delta_ns, &us->n_delta_ns, keep);
  compact(us->from_id, &us->n_from_id, keep);
  compact(us->to_id, &us->n_to_id, keep);
  compact(us->kind, &us->n_kind, keep);
  rebase(&us->base_ns, us->delta_ns, times);
  return true;
}

}  // namespace tmon
