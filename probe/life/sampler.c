/* The sampler thread: starts, ticks at absolute deadlines, keeps the CPU
 * budget, runs work handed to it (_exit), pauses for fork, stops. The
 * tick itself is tick.c. */
#include "sampler.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hidden.h"
#include "probe.h"
#include "sites.h"
#include "userthreads.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*join_fn)(pthread_t, void **);

/* Whether the calling thread is the sampler's (a final tick may run on a
 * program thread). */
static TM_TLS __thread bool on_sampler_thread;

/* The real functions: our own exported wrappers would treat the probe's
 * thread as a program thread. */
static bool next_fn(const char *name, void *fn) {
  void *f = dlsym(RTLD_NEXT, name);
  memcpy(fn, &f, sizeof f); /* ISO C: no object-to-function pointer cast */
  return f != NULL;
}

/* Sleeps to an absolute CLOCK_MONOTONIC deadline, or until
 * tm_sampler_stop wakes us: a raw futex wait on stop_requested, so that a
 * long interval never delays the program's exit. */
static void sleep_until(tm_sampler_ctl *c, const struct timespec *deadline) {
  for (;;) {
    if (atomic_load(&c->stop_requested) || atomic_load(&c->handoff_fn)) return;
    long r = tm_syscall(SYS_futex, &c->stop_requested, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0,
                     deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    if (r < 0 && errno == ETIMEDOUT) return;
  }
}

/* Refused by the display, or given up on it, with no capture file: nothing
 * will ever read what the probe gathers. */
static bool nowhere_to_send(const tm_session *s) {
  return (s->tx.net == TM_NET_REFUSED || s->tx.net == TM_NET_GAVE_UP) && s->tx.file_fd < 0 &&
         !s->tx.file_lost;
}

static void *sampler_main(void *arg) {
  tm_session *s = arg;
  tm_sampler_ctl *c = &s->smp.ctl;
  /* Before registering: the record copies it. The syscall, not our own
   * prctl wrapper, which would take this thread for the program's. */
  tm_syscall(SYS_prctl, PR_SET_NAME, "threadmon", 0, 0, 0);
  on_sampler_thread = true;
  tm_thread *self = tm_thread_register_self(NULL, s->pid);
  if (self) {
    self->is_probe = true;
    self->guard = 1; /* for good: every wrapper passes our calls through */
  }
  s->probe_tid = (uint32_t)gettid();
  /* A forked child's session starts at the interval asked for, not at its
   * parent's over the budget. */
  s->cfg.interval_ns = s->cfg.interval_asked_ns;
  /* The Hello allocates like a tick: a fork must not copy the heap in the
   * middle of it (the fork wrapper lets glibc skip its malloc lock while
   * this thread is out of a tick), so it is one, and waits out a fork's
   * pause. Seen as a child's malloc abort when the program forked at once. */
  for (;;) {
    atomic_store(&c->in_tick, 1);
    if (!atomic_load(&c->pause_requested) || atomic_load(&c->stop_requested)) break;
    atomic_store(&c->in_tick, 0);
    tm_sleep_ns(250000);
  }
  tm_session_send_hello(s, TM_TO_ALL);
  for (unsigned i = 0; i < s->notice_count; i++) tm_emit_notice(s, s->notices[i], TM_TO_ALL);
  atomic_store(&c->in_tick, 0);

  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (!atomic_load(&c->stop_requested)) {
    uint64_t ns = (uint64_t)next.tv_nsec + s->cfg.interval_ns;
    next.tv_sec += (time_t)(ns / 1000000000u);
    next.tv_nsec = (long)(ns % 1000000000u);
    sleep_until(c, &next);
    void (*fn)(void) = atomic_exchange(&c->handoff_fn, NULL);
    if (fn) {
      fn();
      atomic_store(&c->handoff_done, 1);
      tm_syscall(SYS_futex, &c->handoff_done, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
    }
    if (atomic_load(&c->stop_requested)) break;
    if (atomic_load(&c->pause_requested)) continue;
    atomic_store(&c->in_tick, 1);
    if (!atomic_load(&c->pause_requested)) {
      tm_sampler_tick(s);
      tm_budget_keep(s, tm_now_ns(), tm_thread_cpu_ns()); /* may send a Notice: inside */
    }
    atomic_store(&c->in_tick, 0);
    if (nowhere_to_send(s) && atomic_load(&tm_active)) {
      /* Cost the program nothing from here: the wrappers pass every call
       * straight through, and this thread only waits for the end. */
      atomic_store(&tm_active, 0);
    }
    if (!atomic_load(&tm_active)) {
      clock_gettime(CLOCK_MONOTONIC, &next);
      next.tv_sec += 1;
      continue;
    }
    /* Fell behind (a long tick, a stopped process): skip, don't burst. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > next.tv_sec + 1) next = now;
  }
  s->smp.sampler_cpu_ns = tm_thread_cpu_ns();
  if (self) tm_thread_mark_exited(self);
  /* Uncounted, this thread must not pass through glibc's thread end: it
   * would take one off the program's count, and at zero call exit(0) a
   * second time while the thread that stopped us is inside exit(). The
   * kernel still clears our tid, which is all pthread_join waits for. */
  if (c->uncounted) tm_syscall(SYS_exit, 0);
  return NULL;
}

/* glibc ends the process (exit(0)) when its count of live threads drops to
 * zero, so a program whose last thread calls pthread_exit exits. The probe's
 * thread must not count, or that process lives on, a zombie leader with
 * every signal blocked. The counter is glibc-private (2.34 and later): where
 * it is missing the probe goes on counted, as before. */
static unsigned *libc_thread_count(void) {
  void *p = dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE");
  return p;
}

int tm_sampler_start(tm_session *s) {
  tm_sampler_ctl *c = &s->smp.ctl;
  create_fn create;
  if (!next_fn("pthread_create", &create)) {
    errno = ENOSYS;
    return -1;
  }
  atomic_store(&c->stop_requested, 0);
  s->smp.started_ns = tm_now_ns();
  s->smp.budget = (tm_budget){0};
  c->single_before_us = __libc_single_threaded;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits it */
  int err = create(&c->handle, NULL, sampler_main, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err) {
    errno = err;
    return -1;
  }
  unsigned *count = libc_thread_count();
  if (count) __atomic_fetch_sub(count, 1, __ATOMIC_ACQ_REL);
  c->uncounted = count != NULL;
  c->running = true;
  return 0;
}

bool tm_sampler_handoff(tm_session *s, void (*fn)(void), int timeout_ms) {
  tm_sampler_ctl *c = &s->smp.ctl;
  if (!c->running || on_sampler_thread) return false;
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  atomic_store(&c->handoff_done, 0);
  atomic_store(&c->handoff_fn, fn);
  tm_syscall(SYS_futex, &c->stop_requested, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
  int saved = errno;
  while (!atomic_load(&c->handoff_done)) {
    long r = tm_syscall(SYS_futex, &c->handoff_done, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0,
                     &deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    if (r < 0 && errno == ETIMEDOUT) break;
  }
  errno = saved;
  return atomic_load(&c->handoff_done) != 0;
}

void tm_sampler_stop_after_handoff(tm_session *s) { atomic_store(&s->smp.ctl.stop_requested, 1); }

void tm_sampler_tick(tm_session *s) { tm_tick_run(s, on_sampler_thread); }

void tm_sampler_final_tick(tm_session *s) {
  s->smp.final_tick = true;
  tm_sampler_tick(s);
  s->smp.final_tick = false;
}

void tm_sampler_stop(tm_session *s) {
  tm_sampler_ctl *c = &s->smp.ctl;
  if (!c->running) return;
  atomic_store(&c->stop_requested, 1);
  tm_syscall(SYS_futex, &c->stop_requested, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
  join_fn join;
  if (next_fn("pthread_join", &join)) join(c->handle, NULL);
  c->running = false;
}

bool tm_sampler_pause(tm_session *s, bool paused) {
  tm_sampler_ctl *c = &s->smp.ctl;
  atomic_store(&c->pause_requested, paused ? 1 : 0);
  if (!paused) return true;
  /* Wait (bounded) for a tick in progress to finish, so a fork child does
   * not inherit half-updated buffers. */
  for (int i = 0; i < 200 && atomic_load(&c->in_tick); i++) tm_sleep_ns(250000);
  return !atomic_load(&c->in_tick);
}

bool tm_sampler_program_single_threaded(tm_session *s) {
  const tm_sampler_ctl *c = &s->smp.ctl;
  if (!c->running || !c->uncounted || !c->single_before_us) return false;
  if (atomic_load_explicit(&tm_program_created_thread, memory_order_relaxed)) return false;
  unsigned *count = libc_thread_count();
  return count && __atomic_load_n(count, __ATOMIC_ACQUIRE) == 1;
}

void tm_sampler_forget(tm_session *s) {
  /* Every per-thread and per-object state, the sampler thread's controls
   * with them: in a fork child that thread does not exist, and glibc counts
   * the child from 1. */
  tm_sampler_reset(&s->smp);
  for (uint32_t id = 1, last = tm_objects_last_id(); id <= last; id++) {
    tm_object *o = tm_object_by_id(id);
    if (o) atomic_store_explicit(&o->described, 0, memory_order_relaxed);
  }
}
