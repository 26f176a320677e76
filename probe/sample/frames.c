#include "frames.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "madeat.h"
#include "session.h"
#include "sites.h"
#include "sites_wire.h"
#include "stdthread.h"
#include "symbolize.h"
#include "tmnotices.h"
#include "userthreads.h"
#include "userthreads_wire.h"

/* A std::thread's routine is a mangled _State_impl<...>::_M_run name,
 * often over 160 bytes. */
#define TM_START_ROUTINE_BYTES 512
#define STACK_MAX 8

/* ---- batches and sample arrays ---- */

bool tm_batch_push(batch *b, uint64_t t, uint32_t tid, int state, uint32_t obj,
                       uint32_t holder, uint32_t releaser) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 1024;
    /* Arrays already grown keep their new size: harmless, cap stays. */
#define BATCH_GROW(field)                                        \
  do {                                                           \
    void *p_ = realloc(b->field, cap * sizeof *b->field);        \
    if (!p_) return false;                                       \
    b->field = p_;                                               \
  } while (0)
    BATCH_GROW(tid);
    BATCH_GROW(obj);
    BATCH_GROW(holder);
    BATCH_GROW(releaser);
    BATCH_GROW(delta);
    BATCH_GROW(state);
#undef BATCH_GROW
    b->cap = cap;
  }
  if (b->n == 0) b->base = b->last = t;
  b->delta[b->n] = (int64_t)(t - b->last);
  b->last = t;
  b->tid[b->n] = tid;
  b->state[b->n] = state;
  b->obj[b->n] = obj;
  b->holder[b->n] = holder;
  b->releaser[b->n] = releaser;
  b->n++;
  return true;
}

void tm_batch_free(batch *b) {
  free(b->tid);
  free(b->obj);
  free(b->holder);
  free(b->releaser);
  free(b->delta);
  free(b->state);
  *b = (batch){0};
}

Threadmon__LwpSample *tm_lwp_add(tm_frames *f) {
  if (f->lwp_n == f->lwp_cap) {
    size_t cap = f->lwp_cap ? f->lwp_cap * 2 : 64;
    Threadmon__LwpSample *a = realloc(f->lwps, cap * sizeof *a);
    if (!a) return NULL;
    f->lwps = a;
    Threadmon__LwpSample **p = realloc(f->lwp_ptrs, cap * sizeof *p);
    if (!p) return NULL;
    f->lwp_ptrs = p;
    f->lwp_cap = cap;
  }
  Threadmon__LwpSample *l = &f->lwps[f->lwp_n++];
  threadmon__lwp_sample__init(l);
  return l;
}

Threadmon__SyncStats *tm_sync_add(tm_frames *f) {
  if (f->sync_n == f->sync_cap) {
    size_t cap = f->sync_cap ? f->sync_cap * 2 : 64;
    Threadmon__SyncStats *a = realloc(f->syncs, cap * sizeof *a);
    if (!a) return NULL;
    f->syncs = a;
    Threadmon__SyncStats **p = realloc(f->sync_ptrs, cap * sizeof *p);
    if (!p) return NULL;
    f->sync_ptrs = p;
    f->sync_cap = cap;
  }
  Threadmon__SyncStats *s = &f->syncs[f->sync_n++];
  threadmon__sync_stats__init(s);
  return s;
}
void tm_frames_free(tm_frames *f) {
  tm_batch_free(&f->transitions);
  tm_batch_free(&f->switches);
  free(f->lwps);
  free(f->lwp_ptrs);
  free(f->syncs);
  free(f->sync_ptrs);
  free(f->cpu_msgs);
  free(f->cpu_ptrs);
  free(f->ends);
  for (size_t i = 0; i < ROUTINE_CACHE; i++) free(f->routines[i].name);
  memset(f, 0, sizeof *f);
}

void tm_note_end(tm_frames *f, const tm_thread *t, uint64_t time_ns, uint64_t oncpu_ns) {
  if (f->end_n == f->end_cap) {
    size_t cap = f->end_cap ? f->end_cap * 2 : 16;
    ended *e = realloc(f->ends, cap * sizeof *e);
    if (!e) return;
    f->ends = e;
    f->end_cap = cap;
  }
  ended *e = &f->ends[f->end_n++];
  /* Read once the thread is gone: its last yields, which no read follows. */
  *e = (ended){.tid = t->tid, .time_ns = time_ns, .oncpu_ns = oncpu_ns, .yields = t->yields};
  if (atomic_load_explicit(&t->folded, memory_order_relaxed))
    e->folded_changes = tm_thread_folded(t, time_ns, e->fold_ns);
}

/* ---- emitting ---- */

void tm_emit(tm_session *s, const Threadmon__Frame *f, int to) {
  size_t len = tm_encode_frame(&s->enc, f);
  if (len) tm_transport_send(&s->tx, s->enc.buf, len, to);
}

void tm_emit_notice(tm_session *s, const char *text, int to) {
  Threadmon__Notice n = THREADMON__NOTICE__INIT;
  n.time_ns = tm_now_ns();
  n.text = (char *)text;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_NOTICE;
  f.notice = &n;
  tm_emit(s, &f, to);
}

/* The name of the start routine at addr, symbolized once per address: a
 * program that keeps making threads of a few routines paid a dladdr, a
 * search of the module's symbols and five snprintf for every thread (a
 * sixth of the sampler's time per created thread). NULL: out of memory. */
static const routine_entry *known_routine(tm_frames *f, uintptr_t addr) {
  routine_entry *e = &f->routines[(addr >> 4) % ROUTINE_CACHE];
  if (e->addr == addr && e->name) return e;
  char name[TM_START_ROUTINE_BYTES];
  tm_symbolize_format(addr, name, sizeof name);
  char *copy = strdup(name);
  if (!copy) return NULL;
  free(e->name);
  e->name = copy;
  e->addr = addr;
  /* libstdc++'s trampoline of every std::thread: named by its state. */
  e->std_lib = strncmp(copy, "libstdc++.so", 12) == 0;
  return e;
}

/* The start routine's name, made once per thread and kept for resends:
 * a std::thread's state can only be read while the thread lives. */
static const char *routine_name(tm_frames *f, tm_sampler_thread *st, const tm_thread *t,
                                bool live) {
  if (st && st->routine) return st->routine;
  char routine[TM_START_ROUTINE_BYTES] = "";
  uintptr_t addr = (uintptr_t)t->start_routine;
  const routine_entry *e = addr ? known_routine(f, addr) : NULL;
  if (addr && !e)
    tm_symbolize_format(addr, routine, sizeof routine);
  else if (e && !(e->std_lib && live &&
                  tm_std_thread_routine(addr, (uintptr_t)t->start_arg, routine, sizeof routine)))
    snprintf(routine, sizeof routine, "%s", e->name);
  if (st) st->routine = strdup(routine);
  return st && st->routine ? st->routine : "";
}

void tm_emit_thread_start(tm_session *s, const tm_thread *t, tm_sampler_thread *st, bool live,
                          int to) {
  char routine[TM_START_ROUTINE_BYTES];
  snprintf(routine, sizeof routine, "%s", routine_name(&s->smp.fr, st, t, live));
  char name[TM_NAME_BYTES + 1];
  memcpy(name, t->name, TM_NAME_BYTES);
  name[TM_NAME_BYTES] = 0;
  Threadmon__ThreadStart m = THREADMON__THREAD_START__INIT;
  m.tid = t->tid;
  m.time_ns = t->start_ns;
  m.creator_tid = t->creator_tid;
  m.name = name;
  m.start_routine = routine;
  m.is_probe = t->is_probe;
  m.is_main = t->is_main;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_START;
  f.thread_start = &m;
  tm_emit(s, &f, to);
}

/* The words of t's CPU mask a ThreadAttr carries into aff; 0 when it
 * holds every CPU (the wire's empty list). */
static size_t affinity_words(tm_session *s, const tm_thread *t, uint64_t aff[4]) {
  memcpy(aff, t->affinity, 4 * sizeof aff[0]);
  /* Looked up once: glibc opens and reads /sys/devices/system/cpu/possible
   * for it each time, more than the rest of the frame costs. */
  long *ncpu_conf = &s->smp.fr.ncpu_conf;
  if (!*ncpu_conf) *ncpu_conf = sysconf(_SC_NPROCESSORS_CONF);
  long ncpu = *ncpu_conf;
  for (long c = 0; c < ncpu && c < 256; c++)
    if (!(aff[c / 64] >> (c % 64) & 1)) return ncpu > 192 ? 4 : ncpu > 128 ? 3 : ncpu > 64 ? 2 : 1;
  return 0;
}

static void emit_attr_at(tm_session *s, const tm_thread *t, uint64_t time_ns, int to) {
  char name[TM_NAME_BYTES + 1];
  memcpy(name, t->name, TM_NAME_BYTES);
  name[TM_NAME_BYTES] = 0;
  Threadmon__ThreadAttr m = THREADMON__THREAD_ATTR__INIT;
  m.tid = t->tid;
  m.time_ns = time_ns;
  m.name = name;
  m.policy = t->policy;
  m.priority = t->priority;
  m.nice = t->nice;
  uint64_t aff[4];
  m.n_affinity = affinity_words(s, t, aff);
  if (m.n_affinity) m.affinity = aff;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_ATTR;
  f.thread_attr = &m;
  tm_emit(s, &f, to);
}

void tm_emit_thread_attr(tm_session *s, const tm_thread *t, int to) {
  emit_attr_at(s, t, tm_now_ns(), to);
}

void tm_emit_thread_begun(tm_session *s, const tm_thread *t, tm_sampler_thread *st, bool live,
                          int to) {
  tm_emit_thread_start(s, t, st, live, to);
  /* Not changed since its start (a change is sent after this by the
   * caller), and other than what readers assume without a ThreadAttr. */
  if (atomic_load_explicit(&t->attr_version, memory_order_acquire) != 0) return;
  uint64_t aff[4];
  if (t->policy == SCHED_OTHER && t->priority == 0 && t->nice == 0 &&
      affinity_words(s, t, aff) == 0)
    return;
  emit_attr_at(s, t, t->start_ns, to);
}

void tm_emit_sync_object(tm_session *s, tm_object *o, bool with_stack, int to) {
  uintptr_t addr = atomic_load_explicit(&o->address, memory_order_acquire);
  const tm_outside *out = s->smp.outside; /* another process's addresses */
  tm_symbol sym;
  if ((out ? out->symbolize(out->ctx, addr, &sym) : tm_symbolize(addr, &sym)) < 0)
    sym.module[0] = sym.symbol[0] = 0;
  char frames[STACK_MAX][TM_ROUTINE_BYTES];
  char *frame_ptrs[STACK_MAX];
  Threadmon__CodeLocation locs[STACK_MAX];
  Threadmon__CodeLocation *loc_ptrs[STACK_MAX];
  size_t depth = 0;
  if (with_stack) {
    uint32_t n = o->stack_depth < STACK_MAX ? o->stack_depth : STACK_MAX;
    for (uint32_t i = 0; i < n; i++) {
      uintptr_t pc = (uintptr_t)o->first_contention_stack[i];
      tm_code_location where = {0};
      if (out) {
        out->frame(out->ctx, pc, i > 0, frames[i], sizeof frames[i]);
      } else {
        tm_symbolize_format(pc, frames[i], sizeof frames[i]);
        /* Return addresses: the call's line is at pc - 1. */
        tm_symbol at;
        if (pc && tm_symbolize(pc - 1, &at) == 0) where = at.where;
      }
      tm_code_location_message(&where, &locs[i]);
      loc_ptrs[i] = &locs[i];
      frame_ptrs[depth++] = frames[i];
    }
  }
  Threadmon__SyncObject m = THREADMON__SYNC_OBJECT__INIT;
  m.id = o->id;
  m.kind = (Threadmon__SyncKind)o->kind;
  m.address = addr;
  m.module = sym.module;
  m.symbol = sym.symbol;
  m.first_seen_ns = o->first_seen_ns;
  m.flags = o->flags;
  m.n_first_contention_stack = depth;
  m.first_contention_stack = frame_ptrs;
  m.n_first_contention_locations = depth;
  m.first_contention_locations = loc_ptrs;
  /* Where the program made it (this process's table only). */
  char made[TM_ROUTINE_BYTES];
  Threadmon__CodeLocation made_loc;
  uintptr_t made_site = out ? 0 : tm_made_at(addr);
  if (made_site) {
    tm_code_location where = {0};
    tm_symbolize_frame(made_site, true, made, sizeof made, &where);
    tm_code_location_message(&where, &made_loc);
    m.made_at = made;
    m.made_at_location = &made_loc;
  }
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
  f.sync_object = &m;
  tm_emit(s, &f, to);
}

void tm_emit_transitions(tm_session *s, const batch *b, int to) {
  if (!b->n) return;
  Threadmon__Transitions m = THREADMON__TRANSITIONS__INIT;
  m.base_ns = b->base;
  m.n_tid = m.n_delta_ns = m.n_state = m.n_object_id = m.n_holder_tid = m.n_releaser_tid = b->n;
  m.tid = b->tid;
  m.delta_ns = b->delta;
  m.state = (Threadmon__ThreadState *)b->state;
  m.object_id = b->obj;
  m.holder_tid = b->holder;
  m.releaser_tid = b->releaser;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
  f.transitions = &m;
  tm_emit(s, &f, to);
}

void tm_flush_transitions(tm_session *s) {
  tm_emit_transitions(s, &s->smp.fr.transitions, TM_TO_ALL);
  s->smp.fr.transitions.n = 0;
}

void tm_flush_switches(tm_session *s, uint64_t now, bool all) {
  tm_frames *fr = &s->smp.fr;
  batch *sw = &fr->switches;
  if (!sw->n && !s->perf.lost && !fr->switches_stopping) return;
  if (!all && !fr->switches_urgent && !s->perf.lost && sw->n < BATCH_MAX &&
      (int64_t)(now - sw->base) < (int64_t)SWITCH_HOLD_NS) /* base may be after now */
    return;
  fr->switches_urgent = false;
  Threadmon__CpuSwitches m = THREADMON__CPU_SWITCHES__INIT;
  m.base_ns = sw->base;
  m.n_tid = m.n_delta_ns = m.n_cpu = m.n_kind = sw->n;
  m.tid = sw->tid;
  m.delta_ns = sw->delta;
  m.cpu = sw->obj;
  m.kind = (Threadmon__SwitchKind *)sw->state;
  m.lost = s->perf.lost;
  m.stopped = fr->switches_stopping;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SWITCHES;
  f.switches = &m;
  tm_emit(s, &f, TM_TO_ALL);
  sw->n = 0;
  s->perf.lost = 0;
}

void tm_emit_thread_end(tm_session *s, const ended *e, int to) {
  Threadmon__ThreadEnd m = THREADMON__THREAD_END__INIT;
  m.tid = e->tid;
  m.time_ns = e->time_ns;
  m.oncpu_ns = e->oncpu_ns;
  m.yields = e->yields;
  if (e->folded_changes) {
    m.n_folded_ns = TM_FOLD_STATES;
    m.folded_ns = (uint64_t *)e->fold_ns;
    m.folded_changes = e->folded_changes;
  }
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_END;
  f.thread_end = &m;
  tm_emit(s, &f, to);
}

/* Everything a reader needs to understand later frames: the threads and
 * objects described so far and the stacks sent. */
void tm_send_descriptions(tm_session *s, int to) {
  const tm_thread_states *ts = &s->smp.threads;
  uint32_t hw = tm_threads_high_water();
  for (uint32_t i = 0; i < hw; i++) {
    tm_thread *t = tm_thread_slot(i);
    int st = atomic_load_explicit(&t->slot_state, memory_order_acquire);
    tm_sampler_thread *state = tm_state_of_slot(ts, i);
    if ((st == TM_SLOT_LIVE || st == TM_SLOT_EXITED) && state && state->owner == t) {
      tm_emit_thread_start(s, t, state, st == TM_SLOT_LIVE, to);
      tm_emit_thread_attr(s, t, to);
    }
  }
  for (uint32_t id = 1, last = tm_objects_last_id(); id <= last; id++) {
    tm_object *o = tm_object_by_id(id);
    uint32_t d = o ? atomic_load_explicit(&o->described, memory_order_relaxed) : 0;
    if (d) tm_emit_sync_object(s, o, d == 2, to);
  }
  tm_sites_wire_resend(s, to);
  tm_ut_wire_resend(s, to);
}

/* The capture file lost frames (disk full, a file size limit, the program
 * took the descriptor): after a Notice saying what and since when, the
 * descriptions again, and the state of every thread that changed state in
 * the gap is UNKNOWN from the gap's start until its latest change, so
 * readers take it from the kernel there. A thread that did not change state
 * in the gap lost nothing of it: its state goes on (a pthread_join across
 * the gap stays a join, it does not become the kernel's "sleeping"). */
void tm_resync_file(tm_session *s) {
  tm_frames *fr = &s->smp.fr;
  const tm_thread_states *ts = &s->smp.threads;
  tm_transport *tx = &s->tx;
  tm_transport_file_resync_queued(tx);
  tx->file_replaced_noted = tx->file_replaced; /* this Notice says so */
  char text[160];
  snprintf(text, sizeof text,
           TM_NOTICE_GAP " %llu bytes of frames lost from %.3f s (%s); written again from here",
           (unsigned long long)tx->file_gap_bytes,
           (double)(tx->file_gap_start_ns - s->start_ns) / 1e9,
           tx->file_gap_errno == EBADF ? "the program took the capture's descriptor"
                                       : strerror(tx->file_gap_errno));
  tm_emit_notice(s, text, TM_TO_FILE);
  tm_send_descriptions(s, TM_TO_FILE);
  for (size_t i = 0; i < fr->gap_end_n; i++) tm_emit_thread_end(s, &fr->gap_ends[i], TM_TO_FILE);
  fr->gap_end_n = 0;
  /* Unknown from the gap's start, then each thread's latest transition
   * (its state now) at its own time, for the threads whose latest fell in
   * the gap. */
  batch unknown = {0};
  uint32_t hw = tm_threads_high_water();
  for (uint32_t i = 0; i < hw; i++) {
    tm_thread *t = tm_thread_slot(i);
    const tm_sampler_thread *st = tm_state_of_slot(ts, i);
    if (atomic_load_explicit(&t->slot_state, memory_order_acquire) != TM_SLOT_LIVE || !st ||
        st->owner != t)
      continue;
    if (st->last_time <= tx->file_gap_start_ns) continue;
    tm_batch_push(&unknown, tx->file_gap_start_ns, t->tid, TM_STATE_UNKNOWN, 0, 0, 0);
    tm_batch_push(&unknown, st->last_time, t->tid, st->last_state, st->last_obj, 0, 0);
  }
  tm_emit_transitions(s, &unknown, TM_TO_FILE);
  tm_batch_free(&unknown);
  if (s->src_perf_switch) {
    /* Switch records were lost with the rest: an empty batch marked lost
     * makes readers take the gap's on-CPU spans from the samples. */
    Threadmon__CpuSwitches m = THREADMON__CPU_SWITCHES__INIT;
    m.lost = 1;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_SWITCHES;
    f.switches = &m;
    tm_emit(s, &f, TM_TO_FILE);
  }
  tx->file_gap_bytes = 0;
}

