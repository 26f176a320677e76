#include "thread_read.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hidden.h"
#include "perf_switch.h"
#include "read_plan.h"
#include "session.h"

#define STATUS_EVERY 10 /* ticks between status reads per thread */
/* Hardware counters (cycles, instructions) are opened and read on every
 * PERF_EVERY-th read that finds a thread moved (they lag by at most that
 * many runs; a thread that runs fewer times never has them). The software
 * pair (task clock, faults) is never opened: it says what schedstat and
 * stat already say, and its events in a thread's perf context cost the
 * kernel more at every switch of that thread than the switch records do
 * (docs/benchmarks.md, tm-bench-switchcost); its wire fields are filled
 * from those files instead. */
#define PERF_EVERY 8
/* ... and only for threads that used this much CPU: a thread that wakes for
 * microseconds has nothing for cycle counts to say. */
#define PERF_MIN_CPU_NS 20000000ull
#define READ_BYTES 4096 /* status is ~1.4 KB: its ctxt lines come last */

static long task_read(tm_sampler *m, tm_sampler_thread *st, enum tm_task_file which, bool keep,
                      char *buf, size_t n) {
  m->counts.file_reads++;
  return tm_task_read(&m->proc, &st->fds, which, keep, buf, n);
}

/* A futex this thread was seen waiting on outside wrapped calls: hidden.c
 * decides whether it is an internal lock and asks for its call site (line:
 * the syscall file when read this tick, else NULL). */
static void note_hidden_wait(tm_session *s, tm_thread *t, uint64_t futex, const char *line) {
  const tm_outside *o = s->smp.outside;
  if (o) {
    o->futex_wait(o->ctx, s, t, futex, line);
    return;
  }
  if (futex && tm_hidden_seen(&s->smp.hidden, t->tid, futex, line, tm_sampler_now(&s->smp), s->cfg.interval_ns))
    s->smp.hidden_noted = true;
}

void tm_thread_rename_seen(tm_thread *t, const char *name) {
  if (!strncmp(name, t->name, TM_NAME_BYTES)) return;
  snprintf(t->name, TM_NAME_BYTES, "%s", name);
  atomic_fetch_add_explicit(&t->attr_version, 1, memory_order_release);
  tm_thread_touch(t);
}

/* Read from outside, a thread's name is the one in its stat, or the one
 * its runtime gives it. */
static void name_from_stat(const tm_outside *o, tm_thread *t, const char *stat) {
  char name[TM_NAME_BYTES];
  if (!tm_parse_stat_name(stat, name, sizeof name)) return;
  if (o->name) o->name(o->name_ctx, t->tid, name);
  tm_thread_rename_seen(t, name);
}

/* Context switch counts from status: the base the records add to, or the
 * only source for a thread without records. */
static bool read_status(tm_sampler *m, tm_sampler_thread *st) {
  char buf[READ_BYTES];
  uint64_t before = tm_sampler_now(m);
  /* Kept open from its second read on, as stat: while the records are
   * paused a thread that keeps switching has it read every tick, and the
   * open was a quarter of that (MariaDB under sysbench). */
  if (task_read(m, st, TM_TASK_STATUS, st->status_base, buf, sizeof buf) < 0 ||
      !tm_parse_status_ctxsw(buf, &st->vol, &st->invol))
    return false;
  /* A record stamped before the read may still be in a ring: it is in the
   * counts already. */
  st->ctx_after_ns = before;
  st->status_base = true;
  st->status_dirty = false;
  st->status_tick = m->tick_no;
  return true;
}

void tm_thread_read(tm_session *s, tm_thread *t, tm_sampler_thread *st, int how) {
  tm_sampler *m = &s->smp;
  uint32_t cur = *(volatile uint32_t *)&t->cur_state;
  if (how == READ_NONE) {
    /* Blocked since its last read: the same syscall, the same hidden lock,
     * one more tick seen waiting on it. */
    if (st->futex_addr && cur <= TM_STATE_RUNNING) note_hidden_wait(s, t, st->futex_addr, NULL);
    return;
  }
  m->counts.read++;
  char buf[READ_BYTES];
  uint64_t read_ns = how == READ_ALL ? tm_sampler_now(m) : 0; /* a later switch: unread */
  /* The head before the state: a push after it moves the head. */
  uint64_t head = atomic_load_explicit(&t->ring.head, memory_order_acquire);
  bool in_call = *(volatile uint32_t *)&t->cur_state > TM_STATE_RUNNING;
  /* A light wake-up of a thread without records (see
   * LIGHT_FULL_EVERY): back in its wrapped call, out of it only
   * for moments by its events. */
  bool light = how == READ_ALL && in_call && !(s->src_perf_switch && st->covered) &&
               st->have_stat && st->status_base && st->ev_ran_ns < LIGHT_RAN_NS &&
               st->ev_run_from == 0;
  /* A thread's files are kept open from its second read on: most threads
   * of a program that makes thousands a second are read once or twice,
   * and keeping a file costs two more system calls (moving it above the
   * program's descriptors, closing it at the end). */
  if (task_read(m, st, TM_TASK_SCHEDSTAT, st->have_sched, buf, sizeof buf) < 0) return;
  tm_task_sched sc;
  if (!tm_parse_schedstat(buf, &sc)) return;
  /* Read as running by its records, but the switch-out came with a later
   * drain (the read raced the sleep): that read left its stat unread and
   * saw none of the blocking. This one counts as a move, once. */
  bool caught_up = how == READ_ALL && st->read_on_cpu && st->sw_kind != TM_SWITCH_IN &&
                   st->sw_kind != SW_UNKNOWN;
  if (how == READ_ALL) {
    st->read_on_cpu = st->sw_kind == TM_SWITCH_IN;
    st->ran_ns = st->ev_ran_ns = 0;
    st->read_tick = m->tick_no;
    st->read_head = in_call ? head : UINT64_MAX;
  }
  /* schedstat's run time of a thread on a CPU lags by up to a scheduler
   * tick; its CPU clock is brought up to date by the kernel. Only the few
   * threads on a CPU now by the records (or with none yet: new threads)
   * pay for the extra syscall. */
  uint64_t sched_read_ns = tm_sampler_now(m);
  if (s->src_perf_switch && tm_proc_is_self(&m->proc) &&
      (st->sw_kind == TM_SWITCH_IN || st->sw_kind == SW_UNKNOWN)) {
    struct timespec ts;
    clockid_t clock = (clockid_t)((~(unsigned)t->tid << 3) | 6); /* per-thread sched clock */
    if (clock_gettime(clock, &ts) == 0) {
      sched_read_ns = tm_sampler_now(m);
      uint64_t exact = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
      if (exact > sc.oncpu_ns) sc.oncpu_ns = exact;
    }
  }
  bool moved = !st->have_sched || sc.oncpu_ns != st->sched.oncpu_ns ||
               sc.runqueue_ns != st->sched.runqueue_ns || caught_up;
  st->sched = sc;
  st->have_sched = true;
  /* Not moved: it did not run since the last read, nor enter a syscall. */
  if (how == READ_ALL) st->syscall_ns = read_ns;
  uint64_t vol = st->vol, invol = st->invol, futex = st->futex_addr;
  uint32_t asleep = st->asleep_syscall;
  /* The sampler about itself (every tick): getrusage instead of stat and
   * status, the same numbers without two /proc reads. */
  bool self = m->own_thread && t->is_probe && t->tid == s->probe_tid &&
              tm_self_usage(&st->stat, &st->vol, &st->invol);
  if (self) {
    st->have_stat = st->status_base = true;
    st->ctx_after_ns = UINT64_MAX; /* counted by the kernel, not the records */
  }
  const char *futex_line = NULL;
  /* After lost records a thread's last record is unknown, and one blocked
   * for good would be read in full every tick. The kernel's state settles
   * it: not running or runnable at t0 means no reads until its next record
   * (any later switch is stamped after t0). */
  bool settle = how == READ_ALL && !self && st->sw_kind == SW_UNKNOWN && st->covered &&
                s->src_perf_switch;
  uint64_t t0 = settle ? tm_sampler_now(m) : 0;
  if (how == READ_ALL && moved) st->moved_reads++;
  bool stat_read = false;
  if (((how == READ_ALL && moved) || settle) && !self &&
      (settle || tm_stat_due(s, st, cur, sc.oncpu_ns, light, m->own_thread))) {
    if (task_read(m, st, TM_TASK_STAT, st->have_stat, buf, sizeof buf) >= 0 &&
        tm_parse_stat(buf, &st->stat)) {
      st->have_stat = stat_read = true;
      if (m->outside) name_from_stat(m->outside, t, buf);
      st->stat_oncpu_ns = sc.oncpu_ns;
      st->stat_blocked = st->sw_kind == TM_SWITCH_OUT;
      if (settle && st->stat.state != 'R' && st->sw_kind == SW_UNKNOWN) {
        st->sw_kind = TM_SWITCH_OUT;
        st->sw_time = t0;
      }
    }
  }
  /* Not read: where it is and was comes from its latest record. */
  if (!stat_read && !self && st->have_stat && s->src_perf_switch && st->covered &&
      st->sw_kind != SW_UNKNOWN) {
    st->stat.state = st->sw_kind == TM_SWITCH_OUT ? 'S' : 'R';
    if (st->sw_cpu >= 0) st->stat.cpu = st->sw_cpu;
  }
  /* READ_QUEUE stops here: off the CPU since its last full read, so stat,
   * counters and syscall are as they were; only the runqueue wait moves
   * (when it runs, or is migrated while queued). */
  /* Off the CPU, preempted: runnable, in no futex wait. */
  if (how == READ_QUEUE) futex = 0, asleep = 0;
  if (how == READ_ALL && moved) {
    /* Counters only for threads that keep running: opening them is most of
     * what a short-lived thread would cost the sampler. */
    if (st->moved_reads % PERF_EVERY == 0) {
      if (s->src_perf_hw && !st->pc_open && tm_fds_spare() && sc.oncpu_ns >= PERF_MIN_CPU_NS) {
        tm_perf_counters_open(&st->pc, t->tid, false, true);
        st->pc_open = true;
      }
      if (st->pc_open) tm_perf_counters_read(&st->pc, &st->pv);
    }
    /* Hidden locks: a sleeping thread outside every wrapped blocking call
     * that sits in futex() waits on a lock we cannot see otherwise. Only a
     * thread that ran since the last read can be in another syscall. */
    futex = 0;
    asleep = 0;
    if (s->src_futex && st->have_stat && st->stat.state == 'S' && cur <= TM_STATE_RUNNING &&
        !t->is_probe &&
        task_read(m, st, TM_TASK_SYSCALL, true, buf, sizeof buf) >= 0) {
      futex = tm_parse_syscall_futex(buf);
      asleep = tm_parse_syscall_nr(buf); /* "running": woke before the read */
    }
    /* Read again: it may have entered a wrapped call (a join, a cond wait)
     * between the first look and the syscall file, and that futex is seen. */
    if (*(volatile uint32_t *)&t->cur_state > TM_STATE_RUNNING) futex = 0, asleep = 0;
    if (futex) futex_line = buf;
    st->status_dirty = true;
  }
  if (futex || m->outside) note_hidden_wait(s, t, futex, futex_line);
  /* Context switches: counted from the records once a status read gave the
   * base (again after records were lost). Without records: only after it
   * ran, at most every STATUS_EVERY ticks (light ones: as their stat). */
  /* A thread switched more than twice since that read (it got a CPU again
   * that often) is read every time: its voluntary count is how a reader
   * tells a tick it slept outside wrapped calls from schedstat's lag (a
   * storm of futex waits on a lock no wrapper sees would read as time on a
   * CPU). Twice or less a tick is what wrapped waits explain, and where most
   * of a thousand threads are: they stay on STATUS_EVERY. */
  bool from_records = s->src_perf_switch && st->covered;
  bool switched = sc.slices - st->status_slices > 2;
  if (!st->status_base ||
      (!from_records && st->status_dirty &&
       (switched || m->tick_no - st->status_tick >= STATUS_EVERY) &&
       (!light || st->moved_reads % LIGHT_FULL_EVERY == 0))) {
    if (read_status(m, st)) st->status_slices = sc.slices;
  }
  uint64_t yields = t->yields; /* the thread's own counter: a racy read is one behind */
  bool counts = st->vol != vol || st->invol != invol || yields != st->yields;
  /* Folded while its ring was full: sent with the sample (cumulative). */
  if (atomic_load_explicit(&t->folded, memory_order_relaxed)) {
    uint64_t fold[TM_FOLD_STATES];
    uint64_t changes = tm_thread_folded(t, tm_sampler_now(m), fold);
    if (changes != st->folded_sent || memcmp(fold, st->fold_ns, sizeof fold)) {
      memcpy(st->fold_ns, fold, sizeof fold);
      st->folded_sent = changes;
      counts = true;
    }
  }
  st->yields = yields;
  if (!moved && !counts && futex == st->futex_addr && asleep == st->asleep_syscall) return;
  st->futex_addr = futex;
  st->asleep_syscall = asleep;

  Threadmon__LwpSample *l = tm_lwp_add(&m->fr);
  if (!l) return;
  l->tid = t->tid;
  l->oncpu_ns = sc.oncpu_ns;
  l->runqueue_ns = sc.runqueue_ns;
  l->user_ns = st->stat.user_ns;
  l->system_ns = st->stat.system_ns;
  l->minflt = st->stat.minflt;
  l->majflt = st->stat.majflt;
  l->cpu = st->stat.cpu;
  l->kstate = (uint32_t)(unsigned char)st->stat.state;
  l->vol_ctxsw = st->vol;
  l->invol_ctxsw = st->invol;
  l->futex_addr = futex;
  l->asleep_syscall = asleep;
  l->asleep_kind = (Threadmon__AsleepKind)tm_syscall_asleep_kind(asleep);
  l->read_ns = sched_read_ns;
  if (s->src_perf_sw) { /* what the software counters would count */
    l->task_clock_ns = sc.oncpu_ns;
    l->perf_faults = st->stat.minflt + st->stat.majflt;
  }
  l->cycles = st->pv.v[TM_PC_CYCLES];
  l->instructions = st->pv.v[TM_PC_INSTRUCTIONS];
  l->yields = yields;
  if (st->folded_sent) {
    l->n_folded_ns = TM_FOLD_STATES;
    l->folded_ns = st->fold_ns; /* lives until the Tick is sent */
    l->folded_changes = st->folded_sent;
  }
}
