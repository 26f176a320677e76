/* Futex waits of a process read from outside, as sync objects and
 * transitions (xwaits.h). */
#include "xwaits.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "futexwait.h"
#include "remote.h"
#include "rchain.h"
#include "rstack.h"
#include "session.h"
#include "snapshot.h"
#include "waitkind.h"

#define STACK_FRAMES 32
/* The maps are read again when a stack's PC lies in no known mapping (a
 * library loaded since), at most this often. */
#define MAPS_RELOAD_NS 1000000000ull

struct xwait {
  uint32_t tid; /* 0 = empty */
  bool seen;    /* the hook met it: a wait found now began before */
  bool known;   /* registered (by the listing or its first record) */
  uint64_t word;      /* the wait going on, 0 = none */
  uint32_t object;    /* its object, 0 = none (a join) */
  int state;          /* TM_STATE_BLOCKED_*, or 0: no thread state (internal) */
  uint64_t since_ns;  /* when it began */
  /* From its switch records: the first switch-in after since_ns, the
   * latest switch-in and voluntary switch-out. Stale once records are lost
   * or paused (a busy target: the rate limit), never trusted before read_ns. */
  uint64_t first_in, last_in, out_ns;
  uint64_t read_ns;  /* its previous read: what it was doing then is known */
  uint64_t woken_ns; /* first read that found it out of the wait, 0: none */
};

struct xword {
  uint64_t word; /* 0 = empty */
  uint32_t object;
  tm_wait_kind kind;
};

/* ---- tables ---- */

static uint32_t hash32(uint64_t v) { return (uint32_t)((v * 0x9E3779B97F4A7C15u) >> 32); }

static xwait *wait_of(tm_xwaits *x, uint32_t tid) {
  if (x->waits_used * 2 >= x->waits_cap) {
    uint32_t cap = x->waits_cap ? x->waits_cap * 2 : 1024;
    xwait *grown = calloc(cap, sizeof *grown);
    if (!grown) return NULL;
    for (uint32_t i = 0; i < x->waits_cap; i++) {
      if (!x->waits[i].tid) continue;
      uint32_t h = hash32(x->waits[i].tid) & (cap - 1);
      while (grown[h].tid) h = (h + 1) & (cap - 1);
      grown[h] = x->waits[i];
    }
    free(x->waits);
    x->waits = grown;
    x->waits_cap = cap;
  }
  uint32_t h = hash32(tid) & (x->waits_cap - 1);
  while (x->waits[h].tid && x->waits[h].tid != tid) h = (h + 1) & (x->waits_cap - 1);
  if (!x->waits[h].tid) {
    x->waits[h] = (xwait){.tid = tid};
    x->waits_used++;
  }
  return &x->waits[h];
}

static xword *word_of(tm_xwaits *x, uint64_t word, bool add) {
  if (add && x->words_used * 2 >= x->words_cap) {
    uint32_t cap = x->words_cap ? x->words_cap * 2 : 256;
    xword *grown = calloc(cap, sizeof *grown);
    if (!grown) return NULL;
    for (uint32_t i = 0; i < x->words_cap; i++) {
      if (!x->words[i].word) continue;
      uint32_t h = hash32(x->words[i].word) & (cap - 1);
      while (grown[h].word) h = (h + 1) & (cap - 1);
      grown[h] = x->words[i];
    }
    free(x->words);
    x->words = grown;
    x->words_cap = cap;
  }
  if (!x->words_cap) return NULL;
  uint32_t h = hash32(word) & (x->words_cap - 1);
  while (x->words[h].word && x->words[h].word != word) h = (h + 1) & (x->words_cap - 1);
  if (x->words[h].word) return &x->words[h];
  if (!add) return NULL;
  x->words[h] = (xword){.word = word};
  x->words_used++;
  return &x->words[h];
}

/* ---- the target's modules ---- */

static void load_maps(tm_xwaits *x, uint64_t now) {
  if (x->maps_ok) {
    tm_symtabs_free(x->syms);
    tm_rcfi_free(x->cfi);
    tm_maps_free(&x->maps);
  }
  x->syms = NULL;
  x->cfi = NULL;
  x->maps_loaded_ns = now;
  x->maps_ok = tm_maps_load(x->pid, &x->maps, NULL) && x->maps.nmaps > 0;
  if (!x->maps_ok) return;
  x->syms = tm_symtabs_new(&x->maps);
  x->cfi = tm_rcfi_new(&x->maps);
}

/* Kept across ticks; read again for an address no mapping holds. */
static bool maps_cover(tm_xwaits *x, uintptr_t addr, uint64_t now) {
  if (x->maps_ok && tm_maps_find(&x->maps, addr)) return true;
  if (x->maps_ok && now - x->maps_loaded_ns < MAPS_RELOAD_NS) return false;
  load_maps(x, now);
  return x->maps_ok && tm_maps_find(&x->maps, addr);
}

/* ---- kinds ---- */

/* The thread state and object kind of a wait kind; state 0: the thread
 * only sleeps (an INTERNAL object). */
static void kind_of(tm_wait_kind k, int *state, uint32_t *kind) {
  *state = 0;
  *kind = TM_KIND_INTERNAL;
  switch (k) {
  case TM_WAIT_MUTEX:
  case TM_WAIT_RUST_MUTEX: *state = TM_STATE_BLOCKED_MUTEX, *kind = TM_KIND_MUTEX; break;
  case TM_WAIT_COND:
  case TM_WAIT_RUST_CHANNEL:
  case TM_WAIT_RUST_CONDVAR: *state = TM_STATE_BLOCKED_COND, *kind = TM_KIND_COND; break;
  case TM_WAIT_SEM:
  case TM_WAIT_CXX_SEMAPHORE: *state = TM_STATE_BLOCKED_SEM, *kind = TM_KIND_SEM; break;
  case TM_WAIT_RWLOCK_READ:
  case TM_WAIT_RWLOCK_WRITE:
  case TM_WAIT_RUST_RWLOCK: *state = TM_STATE_BLOCKED_RWLOCK, *kind = TM_KIND_RWLOCK; break;
  case TM_WAIT_BARRIER: *state = TM_STATE_BLOCKED_BARRIER, *kind = TM_KIND_BARRIER; break;
  case TM_WAIT_JOIN: *state = TM_STATE_BLOCKED_JOIN, *kind = 0; break;
  default: break;
  }
}

/* The word's object, made on its first wait from the waiter's stack. */
static xword *classify(tm_xwaits *x, uint32_t tid, uint64_t word, const char *line,
                       uint64_t now) {
  xword *w = word_of(x, word, false);
  if (w) return w;
  tm_syscall sc;
  uintptr_t pcs[STACK_FRAMES];
  int n = 0, exact = 0;
  if (x->stacks && line && tm_syscall_parse(line, &sc) && maps_cover(x, sc.pc, now)) {
    n = tm_remote_stack(x->pid, (pid_t)tid, line, &x->maps, x->cfi, pcs, STACK_FRAMES, &exact);
    if (exact >= 2 && n > exact && x->syms)
      n = tm_remote_chain_clean(&x->maps, x->syms, pcs, n, exact);
  }
  /* A stack could not be read (the thread moved on): next time. */
  if (n <= 0) return NULL;
  if (!(w = word_of(x, word, true))) return NULL;
  tm_wait_class wc = x->syms ? tm_wait_classify(x->syms, pcs, n)
                             : (tm_wait_class){TM_WAIT_UNKNOWN, "", -1};
  w->kind = wc.kind;
  int state;
  uint32_t kind;
  kind_of(w->kind, &state, &kind);
  if (!kind) return w; /* a join waits for a thread, not an object */
  tm_object *o = tm_object_get((const void *)(uintptr_t)word, kind);
  if (!o) return w;
  w->object = __atomic_load_n(&o->id, __ATOMIC_ACQUIRE);
  if (!atomic_load_explicit(&o->has_stack, memory_order_relaxed)) {
    /* The call site is the caller of the function that waits (as the
     * probe's wrappers see it): the frames above the one that named it. */
    int from = wc.frame >= 0 && wc.frame + 1 < n ? wc.frame + 1 : 0;
    uint32_t depth = (uint32_t)(n - from) < 8 ? (uint32_t)(n - from) : 8;
    for (uint32_t i = 0; i < depth; i++) o->first_contention_stack[i] = (void *)pcs[from + i];
    o->stack_depth = depth;
    atomic_store_explicit(&o->has_stack, 1, memory_order_release);
  }
  return w;
}

/* ---- transitions ---- */

static void push(tm_xwaits *x, uint64_t t, uint32_t tid, int state, uint32_t obj,
                 uint32_t holder) {
  batch *b = &x->s->smp.fr.transitions;
  if (b->n >= BATCH_MAX) tm_flush_transitions(x->s);
  tm_batch_push(b, t, tid, state, obj, holder, 0);
}

/* The wait's time so far into its object's totals. */
static void add_wait_time(const xwait *w, uint64_t at) {
  tm_object *o = w->object ? tm_object_by_id(w->object) : NULL;
  if (o && at > w->since_ns) {
    uint64_t d = at - w->since_ns;
    atomic_fetch_add_explicit(&o->wait_ns, d, memory_order_relaxed);
    if (d > atomic_load_explicit(&o->max_wait_ns, memory_order_relaxed))
      atomic_store_explicit(&o->max_wait_ns, d, memory_order_relaxed);
  }
}

static void end_wait(tm_xwaits *x, xwait *w, uint64_t at) {
  if (w->state) push(x, at, w->tid, TM_STATE_RUNNING, 0, 0);
  add_wait_time(w, at);
  w->word = 0;
  w->object = 0;
  w->state = 0;
  w->woken_ns = 0;
}

/* Who the wait is for, as its word says now (0: unknown or none). */
static uint32_t holder_now(tm_xwaits *x, const xwait *w, const xword *xw, const char *line) {
  tm_syscall sc;
  if (!x->stacks || !xw || !line || !tm_syscall_parse(line, &sc)) return 0;
  tm_futex_wait fw = tm_futex_decode(x->pid, &sc);
  pid_t owner = fw.op != TM_FUTEX_NONE ? tm_wait_owner(x->pid, &fw, xw->kind) : 0;
  return owner > 0 && (uint32_t)owner != w->tid ? (uint32_t)owner : 0;
}

static void begin_wait(tm_xwaits *x, xwait *w, const xword *xw, uint64_t word, const char *line,
                       uint64_t at) {
  int state;
  uint32_t kind;
  kind_of(xw ? xw->kind : TM_WAIT_UNKNOWN, &state, &kind);
  w->word = word;
  w->object = xw ? xw->object : 0;
  w->state = state;
  w->since_ns = at;
  w->first_in = 0;
  w->woken_ns = 0;
  tm_object *o = w->object ? tm_object_by_id(w->object) : NULL;
  if (o) atomic_fetch_add_explicit(&o->contentions, 1, memory_order_relaxed);
  if (state) push(x, at, w->tid, state, w->object, holder_now(x, w, xw, line));
}

/* tm_outside.futex_wait */
static void futex_wait(void *ctx, tm_session *s, tm_thread *t, uint64_t word, const char *line) {
  tm_xwaits *x = ctx;
  (void)s;
  xwait *w = wait_of(x, t->tid);
  if (!w) return;
  uint64_t now = tm_sampler_now(&x->s->smp);
  const uint64_t prev_read = w->read_ns;
  w->read_ns = now;
  /* A wait found at a thread's first read began before anyone looked:
   * from its start in the session. Else from its last voluntary
   * switch-out, when records say it has slept since; but never before the
   * previous read, which saw it doing something else (a switch-out older
   * than that is stale: records lost or paused since, and a wait counted
   * from it would overlap the ones before). Nothing before the session counts. */
  uint64_t began = !w->seen ? t->start_ns : w->out_ns > w->last_in ? w->out_ns : now;
  if (w->seen && began < prev_read) began = prev_read;
  if (began < x->s->start_ns) began = x->s->start_ns;
  w->seen = true;
  bool ran = w->first_in && w->first_in > w->since_ns;
  /* Woken but not yet on a CPU (its syscall file no longer says futex):
   * still in the call, as the wrappers would count it, until its first
   * switch-in, which records will bring; unless two ticks pass without it
   * (records lost): then it ended where it was first seen out of it. */
  if (w->word && !word && !ran && x->s->src_perf_switch) {
    if (!w->woken_ns) w->woken_ns = now;
    if (now - w->woken_ns <= 2 * x->s->cfg.interval_ns) return;
  }
  if (word && word == w->word) w->woken_ns = 0; /* asleep on it again */
  if (w->word && (word != w->word || ran)) {
    /* Over: at its first switch-in since it began, else when it was first
     * seen out of it, else now. */
    uint64_t end = ran ? w->first_in : w->woken_ns ? w->woken_ns : now;
    bool again = word == w->word;
    end_wait(x, w, end);
    /* It ran and sleeps on the same word again: a new wait. */
    if (again && !(w->out_ns > end)) word = 0;
    /* One wait at a time: the next begins after this one ended (without
     * records both are placed at this read, and overlapping them counted
     * the time between two reads twice). */
    if (began < end) began = end;
  }
  if (word && !w->word) {
    xword *xw = classify(x, t->tid, word, line, now);
    if (!xw && !line) return; /* the stack is read at the next full read */
    begin_wait(x, w, xw, word, line, began < now ? began : now);
  }
  tm_object *o = w->object ? tm_object_by_id(w->object) : NULL;
  if (o) atomic_fetch_add_explicit(&o->wait_samples, 1, memory_order_relaxed);
}

/* ---- switch records ---- */

static tm_thread *adopt(void *ctx, uint32_t tid);

static void note_record(void *arg, uint32_t tid, uint64_t time_ns, uint32_t cpu, int kind) {
  tm_xwaits *x = arg;
  xwait *w = wait_of(x, tid);
  /* A thread made after the attach writes its records through the events
   * it inherited: followed from its first, even if it ends before any
   * listing could show it. */
  if (w && !w->known) {
    w->known = true;
    if (!tm_thread_by_tid(tid)) adopt(x, tid);
  }
  if (w && kind == TM_SWITCH_IN) {
    /* Drained CPU by CPU: not in time order across CPUs. */
    if (time_ns > w->since_ns && (!w->first_in || time_ns < w->first_in)) w->first_in = time_ns;
    if (time_ns > w->last_in) w->last_in = time_ns;
  } else if (w && kind == TM_SWITCH_OUT && time_ns > w->out_ns) {
    w->out_ns = time_ns;
  }
  x->fwd(x->fwd_arg, tid, time_ns, cpu, kind);
}

static void switch_source(tm_session *s, tm_switch_fn fn, void *arg) {
  tm_xwaits *x = s->smp.outside->ctx;
  x->fwd = fn;
  x->fwd_arg = arg;
  tm_perf_switch_drain(&s->perf, note_record, x);
}

/* ---- names ---- */

static int symbolize(void *ctx, uintptr_t addr, tm_symbol *out) {
  tm_xwaits *x = ctx;
  memset(out, 0, sizeof *out);
  if (!maps_cover(x, addr, tm_now_ns())) return -1;
  char text[sizeof out->module + sizeof out->symbol];
  tm_symtabs_format(x->syms, addr, false, text, sizeof text);
  /* "module!symbol+0xoff" or "module+0xoff" */
  char *bang = strchr(text, '!');
  char *cut = bang ? bang : strrchr(text, '+');
  if (cut) *cut = 0;
  snprintf(out->module, sizeof out->module, "%.*s", (int)sizeof out->module - 1, text);
  if (bang)
    snprintf(out->symbol, sizeof out->symbol, "%.*s", (int)sizeof out->symbol - 1, bang + 1);
  return 0;
}

static void frame(void *ctx, uintptr_t pc, bool return_address, char *out, size_t n) {
  tm_xwaits *x = ctx;
  if (maps_cover(x, pc, tm_now_ns())) tm_symtabs_format(x->syms, pc, return_address, out, n);
  else snprintf(out, n, "0x%lx", (unsigned long)pc);
}

/* ---- set-up ---- */

static tm_thread *adopt(void *ctx, uint32_t tid) {
  tm_xwaits *x = ctx;
  xwait *w = wait_of(x, tid);
  if (w) w->known = true;
  tm_thread *t = tm_thread_register_foreign(tid);
  if (!t) return NULL;
  t->is_main = tid == (uint32_t)x->pid;
  char path[96], buf[512];
  snprintf(path, sizeof path, "/proc/%d/task/%u/stat", (int)x->pid, tid);
  if (tm_read_file(path, buf, sizeof buf) > 0) tm_parse_stat_name(buf, t->name, sizeof t->name);
  if (x->hooks.name) x->hooks.name(x->hooks.name_ctx, tid, t->name);
  return t;
}

bool tm_xwaits_init(tm_xwaits *x, tm_session *s, pid_t pid, bool stacks) {
  memset(x, 0, sizeof *x);
  x->pid = pid;
  x->stacks = stacks;
  x->s = s;
  x->hooks = (tm_outside){.ctx = x, .futex_wait = futex_wait, .adopt = adopt,
                          .symbolize = symbolize, .frame = frame};
  s->smp.outside = &x->hooks;
  if (s->src_perf_switch) s->smp.switch_source = switch_source;
  if (stacks) load_maps(x, tm_now_ns());
  return wait_of(x, (uint32_t)pid) != NULL;
}

void tm_xwaits_image_changed(tm_xwaits *x) {
  if (x->stacks) load_maps(x, tm_now_ns());
}

void tm_xwaits_close(tm_xwaits *x, uint64_t now) {
  for (uint32_t i = 0; i < x->waits_cap; i++) {
    xwait *w = &x->waits[i];
    if (w->tid && w->word) add_wait_time(w, now);
    w->since_ns = now;
  }
}

void tm_xwaits_free(tm_xwaits *x) {
  if (x->maps_ok) {
    tm_symtabs_free(x->syms);
    tm_rcfi_free(x->cfi);
    tm_maps_free(&x->maps);
  }
  free(x->waits);
  free(x->words);
  memset(x, 0, sizeof *x);
}
