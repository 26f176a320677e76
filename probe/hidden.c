/* Hidden (internal) locks and their call sites (hidden.h). */
#include "hidden.h"

#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "probe.h"
#include "sites.h"
#include "stackscan.h"

#define THREADS_CAP 4096        /* waiting threads remembered (power of two) */
#define WORDS_CAP 1024          /* futex words judged (power of two) */
#define SLOTS 64                /* stack requests in flight */
#define STALE_NS 2000000000u    /* a thread not seen waiting this long: entry reusable */
#define ASK_TIMEOUT_NS 200000000u
#define UNWIND_MAX (TM_SITE_FRAMES + 8)

/* ---- requests: written by the sampler, answered by the signal handler ---- */

enum { SLOT_FREE, SLOT_ASKED, SLOT_BUSY, SLOT_DONE, SLOT_MISSED };

typedef struct capture_slot {
  _Atomic uint32_t state;
  _Atomic uint32_t tid;
  uint64_t word;
  uint64_t asked_ns;
  uint32_t depth;
  void *pcs[TM_SITE_FRAMES];
} capture_slot;

static capture_slot slots[SLOTS];

/* Async-signal-safe: atomics, gettid, unw_backtrace (as measured: see
 * PLATFORM-FACTS), errno kept. */
static void on_capture_signal(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  if (si->si_code != SI_TKILL || si->si_pid != getpid()) return; /* not ours */
  int saved = errno;
  uint32_t tid = (uint32_t)syscall(SYS_gettid);
  capture_slot *c = NULL;
  for (int i = 0; i < SLOTS && !c; i++) {
    uint32_t asked = SLOT_ASKED;
    if (atomic_load_explicit(&slots[i].tid, memory_order_acquire) == tid &&
        atomic_compare_exchange_strong(&slots[i].state, &asked, SLOT_BUSY))
      c = &slots[i];
  }
  if (c) {
    const greg_t *g = ((const ucontext_t *)ctx)->uc_mcontext.gregs;
    /* The kernel set the interrupted futex call up for its restart: RAX is
     * its number again and RIP the syscall instruction. */
    if ((uint64_t)g[REG_RAX] != SYS_futex || (uint64_t)g[REG_RDI] != c->word) {
      atomic_store_explicit(&c->state, SLOT_MISSED, memory_order_release);
    } else {
      tm_thread *t = tm_self;
      if (t) t->guard++; /* libunwind locks mutexes: pass them through */
      void *pcs[UNWIND_MAX];
      int n = unw_backtrace(pcs, UNWIND_MAX);
      if (t) t->guard--;
      /* Drop the handler's and the trampoline's frames: start at the
       * interrupted PC. */
      int first = -1;
      for (int i = 0; i < n && first < 0; i++)
        if ((uintptr_t)pcs[i] == (uintptr_t)g[REG_RIP]) first = i;
      if (first < 0) {
        c->depth = 1;
        c->pcs[0] = (void *)g[REG_RIP];
      } else {
        c->depth = 0;
        for (int i = first; i < n && c->depth < TM_SITE_FRAMES; i++) c->pcs[c->depth++] = pcs[i];
      }
      atomic_store_explicit(&c->state, SLOT_DONE, memory_order_release);
    }
  }
  errno = saved;
}

/* ---- the signal's disposition ---- */

static bool handler_installed, signalling_off;
static uint64_t signals_sent, scans_done;

uint64_t tm_hidden_signals_sent(void) { return signals_sent; }
uint64_t tm_hidden_scans_done(void) { return scans_done; }

/* True when our handler is in place. Installs it only over SIG_DFL; a
 * program that set its own (before or after us) turns signalling off for
 * the rest of the process. */
static bool handler_ready(void) {
  if (signalling_off) return false;
  int sig = TM_HIDDEN_SIGNAL;
  struct sigaction cur;
  if (sigaction(sig, NULL, &cur) != 0) {
    signalling_off = true;
    return false;
  }
  if (handler_installed) {
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_capture_signal) return true;
    signalling_off = true; /* the program took the signal over */
    return false;
  }
  if (cur.sa_handler != SIG_DFL || (cur.sa_flags & SA_SIGINFO)) {
    signalling_off = true;
    return false;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_capture_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  if (sigaction(sig, &sa, NULL) != 0) {
    signalling_off = true;
    return false;
  }
  handler_installed = true;
  return true;
}

/* ---- /proc reads of one thread ---- */

static long read_task_file(uint32_t tid, const char *name, char *buf, size_t n) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%u/%s", tid, name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t r;
  do r = read(fd, buf, n - 1);
  while (r < 0 && errno == EINTR);
  close(fd);
  if (r < 0) return -1;
  buf[r] = 0;
  return r;
}

/* The thread blocks the signal (SigBlk of its status). */
static bool signal_blocked(uint32_t tid) {
  char buf[4096];
  if (read_task_file(tid, "status", buf, sizeof buf) < 0) return true;
  const char *p = strstr(buf, "\nSigBlk:");
  if (!p) return true;
  unsigned long long mask = strtoull(p + 8, NULL, 16);
  return (mask >> (TM_HIDDEN_SIGNAL - 1)) & 1;
}

bool tm_hidden_untimed_wait(const char *s, uint64_t word) {
  /* "202 0xWORD 0xOP 0xVAL 0xTIMEOUT 0x... sp pc" */
  char *end;
  long nr = strtol(s, &end, 10);
  if (end == s || nr != SYS_futex) return false;
  unsigned long long a[4];
  const char *p = end;
  for (int i = 0; i < 4; i++) {
    a[i] = strtoull(p, &end, 16);
    if (end == p) return false;
    p = end;
  }
  int cmd = (int)(a[1] & FUTEX_CMD_MASK);
  return a[0] == word && (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) && a[3] == 0;
}

/* ---- futex words: internal lock or part of an interposed object ---- */

typedef struct word_verdict {
  uint64_t word;    /* 0 = free entry */
  uint32_t object;  /* internal object id, 0 = none (yet) */
  uint32_t checked; /* objects with ids up to this one were compared */
  bool refused;     /* inside an interposed object */
} word_verdict;

static word_verdict words[WORDS_CAP];

static size_t object_bytes(uint32_t kind) {
  switch (kind) {
  case TM_KIND_MUTEX: return sizeof(pthread_mutex_t);
  case TM_KIND_COND: return sizeof(pthread_cond_t);
  case TM_KIND_RWLOCK: return sizeof(pthread_rwlock_t);
  case TM_KIND_BARRIER: return sizeof(pthread_barrier_t);
  case TM_KIND_SPIN: return sizeof(pthread_spinlock_t);
  case TM_KIND_SEM: return sizeof(sem_t);
  default: return 0;
  }
}

/* The internal object for word, 0 when it belongs to an interposed one.
 * Objects added since the last look are compared too: one the program
 * only now passed to a wrapper refuses the word from then on. */
static uint32_t internal_object(uint64_t word) {
  uint32_t h = (uint32_t)((word * 0x9E3779B97F4A7C15u) >> 40) & (WORDS_CAP - 1);
  word_verdict *v = NULL;
  for (uint32_t i = 0; i < WORDS_CAP; i++) {
    word_verdict *e = &words[(h + i) & (WORDS_CAP - 1)];
    if (e->word == word || e->word == 0) {
      v = e;
      break;
    }
  }
  if (!v) return 0; /* table full: count nothing rather than guess */
  v->word = word;
  uint32_t last = tm_objects_last_id();
  for (uint32_t id = v->checked + 1; id <= last && !v->refused; id++) {
    tm_object *o = tm_object_by_id(id);
    if (!o) {
      last = id - 1; /* still being published: look again next time */
      break;
    }
    uintptr_t a = atomic_load_explicit(&o->address, memory_order_acquire);
    if (o->kind != TM_KIND_INTERNAL && word >= a && word < a + object_bytes(o->kind))
      v->refused = true;
  }
  v->checked = last;
  if (v->refused) return 0;
  if (!v->object) {
    tm_object *o = tm_object_get((const void *)(uintptr_t)word, TM_KIND_INTERNAL);
    if (o && o->kind == TM_KIND_INTERNAL) v->object = __atomic_load_n(&o->id, __ATOMIC_ACQUIRE);
  }
  return v->object;
}

/* ---- waiting threads ---- */

typedef struct hidden_thread {
  uint32_t tid; /* 0 = free */
  uint32_t object;
  uint64_t word;
  uint32_t stack;   /* last reported on word, 0 = none */
  uint32_t pending; /* samples waiting for the first report */
  int slot;         /* request in flight, -1 = none */
  bool signalable;  /* last syscall read: untimed futex wait on word */
  uint64_t seen_ns, asked_ns;
} hidden_thread;

static hidden_thread threads[THREADS_CAP];
static uint64_t tick_interval_ns = 10000000u;

static hidden_thread *thread_get(uint32_t tid, uint64_t now) {
  uint32_t h = (tid * 0x9E3779B1u) & (THREADS_CAP - 1);
  hidden_thread *reuse = NULL;
  for (uint32_t i = 0; i < 64; i++) {
    hidden_thread *e = &threads[(h + i) & (THREADS_CAP - 1)];
    if (e->tid == tid) return e;
    if (!reuse && (e->tid == 0 || (e->slot < 0 && now - e->seen_ns > STALE_NS))) reuse = e;
    if (e->tid == 0) break;
  }
  if (!reuse) return NULL;
  /* A stale entry keeps its place in others' probe sequences: it is only
   * overwritten, never emptied. */
  *reuse = (hidden_thread){.tid = tid, .slot = -1};
  return reuse;
}

static void flush_pending(hidden_thread *ht, uint32_t stack) {
  if (ht->pending && ht->object)
    tm_site_add(ht->object, stack, ht->pending, ht->pending * tick_interval_ns);
  ht->pending = 0;
}

static void ask_stack(hidden_thread *ht, uint64_t now) {
  if (ht->slot >= 0 || !ht->signalable || now - ht->asked_ns < TM_HIDDEN_CAPTURE_NS) return;
  if (!handler_ready() || signal_blocked(ht->tid)) return;
  /* Read again right before the signal: the window in which the thread
   * can have left the wait shrinks to the few microseconds until tgkill. */
  char buf[256];
  if (read_task_file(ht->tid, "syscall", buf, sizeof buf) < 0 ||
      !tm_hidden_untimed_wait(buf, ht->word))
    return;
  for (int i = 0; i < SLOTS; i++) {
    capture_slot *c = &slots[i];
    if (atomic_load_explicit(&c->state, memory_order_acquire) != SLOT_FREE) continue;
    c->word = ht->word;
    c->asked_ns = now;
    c->depth = 0;
    atomic_store_explicit(&c->tid, ht->tid, memory_order_relaxed);
    atomic_store_explicit(&c->state, SLOT_ASKED, memory_order_release);
    if (syscall(SYS_tgkill, getpid(), ht->tid, TM_HIDDEN_SIGNAL) != 0) {
      atomic_store_explicit(&c->state, SLOT_FREE, memory_order_release);
      return;
    }
    signals_sent++;
    ht->slot = i;
    ht->asked_ns = now;
    return;
  }
}

bool tm_hidden_seen(uint32_t tid, uint64_t word, const char *syscall_line, uint64_t now_ns,
                    uint64_t tick_ns) {
  tick_interval_ns = tick_ns;
  uint32_t oid = internal_object(word);
  if (!oid) return false;
  tm_object *o = tm_object_by_id(oid);
  if (o) atomic_fetch_add_explicit(&o->wait_samples, 1, memory_order_relaxed);
  hidden_thread *ht = thread_get(tid, now_ns);
  if (!ht) {
    tm_site_add(oid, TM_SITE_UNKNOWN, 1, tick_ns);
    return true;
  }
  if (ht->word != word) { /* another lock (or the first) */
    flush_pending(ht, TM_SITE_UNKNOWN);
    ht->word = word;
    ht->object = oid;
    ht->stack = 0;
    ht->signalable = false;
  }
  if (syscall_line) ht->signalable = tm_hidden_untimed_wait(syscall_line, word);
  ht->seen_ns = now_ns;
  /* Its stack, read without disturbing it (most waits on a hidden lock
   * last microseconds: over before a signal could land). */
  if (syscall_line && ht->slot < 0 &&
      (!ht->stack || now_ns - ht->asked_ns >= TM_HIDDEN_CAPTURE_NS)) {
    void *pcs[TM_SITE_FRAMES];
    int n = tm_stack_scan(tid, syscall_line, pcs, TM_SITE_FRAMES);
    if (n > 0) {
      ht->stack = tm_site_intern(pcs, (uint32_t)n, true);
      ht->asked_ns = now_ns;
      scans_done++;
      flush_pending(ht, ht->stack);
    }
  }
  if (ht->stack) {
    tm_site_add(oid, ht->stack, 1, tick_ns);
  } else {
    ht->pending++;
    ask_stack(ht, now_ns);
    /* No report can come: the samples count as not unwound. */
    if (ht->slot < 0) flush_pending(ht, TM_SITE_UNKNOWN);
  }
  if (ht->stack) ask_stack(ht, now_ns); /* refresh: the call site may change */
  return true;
}

static hidden_thread *thread_find(uint32_t tid) {
  uint32_t h = (tid * 0x9E3779B1u) & (THREADS_CAP - 1);
  for (uint32_t i = 0; i < 64; i++) {
    hidden_thread *e = &threads[(h + i) & (THREADS_CAP - 1)];
    if (e->tid == tid) return e;
    if (e->tid == 0) break;
  }
  return NULL;
}

void tm_hidden_collect(uint64_t now_ns) {
  for (int i = 0; i < SLOTS; i++) {
    capture_slot *c = &slots[i];
    uint32_t state = atomic_load_explicit(&c->state, memory_order_acquire);
    if (state == SLOT_FREE || state == SLOT_BUSY) continue;
    uint32_t tid = atomic_load_explicit(&c->tid, memory_order_relaxed);
    if (state == SLOT_ASKED) {
      /* Never delivered (the thread exited, or the handler found no slot):
       * take the request back unless the handler is taking it now. */
      if (now_ns - c->asked_ns < ASK_TIMEOUT_NS ||
          !atomic_compare_exchange_strong(&c->state, &state, SLOT_FREE))
        continue;
      state = SLOT_MISSED;
    }
    hidden_thread *ht = thread_find(tid);
    if (ht && ht->slot == i) {
      ht->slot = -1;
      if (state == SLOT_DONE && ht->word == c->word) {
        ht->stack = tm_site_intern(c->pcs, c->depth, true);
        flush_pending(ht, ht->stack);
      } else {
        flush_pending(ht, ht->stack ? ht->stack : TM_SITE_UNKNOWN);
      }
    }
    atomic_store_explicit(&c->state, SLOT_FREE, memory_order_release);
  }
}

void tm_hidden_forget(void) {
  memset(threads, 0, sizeof threads);
  memset(words, 0, sizeof words);
  for (int i = 0; i < SLOTS; i++) atomic_store(&slots[i].state, SLOT_FREE);
  signals_sent = scans_done = 0;
}
