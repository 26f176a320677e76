/* Hidden (internal) locks and their call sites (hidden.h). */
#include "hidden.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "sites.h"
#include "callchain.h"
#include "stackscan.h"

#define THREADS_CAP 4096        /* waiting threads remembered (power of two) */
#define WORDS_CAP 1024          /* futex words judged (power of two) */
#define STALE_NS 2000000000u    /* a thread not seen waiting this long: entry reusable */
#define SCAN_FRAMES 48          /* return addresses a stack scan may find, stale ones included */

/* ---- futex words: internal lock or part of an interposed object ---- */

typedef struct word_verdict {
  uint64_t word;    /* 0 = free entry */
  uint32_t object;  /* internal object id, 0 = none (yet) */
  uint32_t checked; /* objects with ids up to this one were compared */
  bool refused;     /* inside an interposed object */
} word_verdict;


static size_t object_bytes(uint32_t kind) {
  switch (kind) {
  case TM_KIND_MUTEX: return sizeof(pthread_mutex_t);
  case TM_KIND_COND: return sizeof(pthread_cond_t);
  case TM_KIND_RWLOCK: return sizeof(pthread_rwlock_t);
  case TM_KIND_BARRIER: return sizeof(pthread_barrier_t);
  case TM_KIND_SPIN: return sizeof(pthread_spinlock_t);
  case TM_KIND_SEM: return sizeof(sem_t);
  case TM_KIND_FUTEX: return sizeof(uint32_t);
  default: return 0;
  }
}

/* The internal object for word, 0 when it belongs to an interposed one.
 * Objects added since the last look are compared too: one the program
 * only now passed to a wrapper refuses the word from then on. */
/* The probe's own image: its futex words (a thread waiting in _exit for the
 * probe's thread to end the session) are the probe's, not a program lock. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char _end[] __attribute__((visibility("hidden")));

static bool in_probe_image(uint64_t word) {
  return word >= (uintptr_t)__ehdr_start && word < (uintptr_t)_end;
}

/* word's entry, or the free one it would take; NULL when the table is full. */
static word_verdict *word_slot(const tm_hidden *h, uint64_t word) {
  uint32_t at = (uint32_t)((word * 0x9E3779B97F4A7C15u) >> 40) & (WORDS_CAP - 1);
  for (uint32_t i = 0; i < WORDS_CAP; i++) {
    word_verdict *e = &h->words[(at + i) & (WORDS_CAP - 1)];
    if (e->word == word || e->word == 0) return e;
  }
  return NULL;
}

static uint32_t internal_object(tm_hidden *h, uint64_t word) {
  if (in_probe_image(word)) return 0;
  word_verdict *v = word_slot(h, word);
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
  uint32_t stack; /* last read while it waited on word, 0 = none */
  uint64_t seen_ns, scanned_ns;
} hidden_thread;

/* tid's entry; NULL when it has none, with *room the entry it may take
 * (free, or a thread's not seen waiting for STALE_NS), NULL when none. */
static hidden_thread *thread_find(const tm_hidden *h, uint32_t tid, uint64_t now,
                                  hidden_thread **room) {
  uint32_t at = (tid * 0x9E3779B1u) & (THREADS_CAP - 1);
  *room = NULL;
  for (uint32_t i = 0; i < 64; i++) {
    hidden_thread *e = &h->threads[(at + i) & (THREADS_CAP - 1)];
    if (e->tid == tid) return e;
    if (!*room && (e->tid == 0 || now - e->seen_ns > STALE_NS)) *room = e;
    if (e->tid == 0) break;
  }
  return NULL;
}

static hidden_thread *thread_get(tm_hidden *h, uint32_t tid, uint64_t now) {
  hidden_thread *room, *e = thread_find(h, tid, now, &room);
  if (e || !room) return e;
  /* A stale entry keeps its place in others' probe sequences: it is only
   * overwritten, never emptied. */
  *room = (hidden_thread){.tid = tid};
  return room;
}

/* Whether a sighting of tid on word, its syscall line just read, should
 * read its stack: the first sighting at all, or of a word not judged yet;
 * not for a word judged no internal lock (or left without an object), nor
 * when a table has no room for the word or the thread; for a lock, when
 * the thread has no stack for it or one TM_HIDDEN_SCAN_NS old. Changes
 * nothing: tm_hidden_seen asks before the tables are made or updated. */
static bool scan_due(const tm_hidden *h, uint32_t tid, uint64_t word, uint64_t now) {
  if (in_probe_image(word)) return false;
  if (!h->words) return true;
  const word_verdict *v = word_slot(h, word);
  if (!v || (v->word == word && !v->object)) return false;
  hidden_thread *room;
  const hidden_thread *e = thread_find(h, tid, now, &room);
  if (!e) return room != NULL;
  return e->word != word || !e->stack || now - e->scanned_ns >= TM_HIDDEN_SCAN_NS;
}

bool tm_hidden_seen(tm_hidden *h, uint32_t tid, uint64_t word, const char *syscall_line,
                    uint64_t now_ns, uint64_t tick_ns) {
  /* Its stack, read without disturbing it, before anything else: the
   * thread may wake at any moment after its syscall file was read, and the
   * first sighting's tables and object took 20-300 us on a loaded machine
   * (the only sighting of a lock in a run has nothing else to go by). */
  void *pcs[SCAN_FRAMES];
  int scanned = 0, exact = 0;
  if (syscall_line && scan_due(h, tid, word, now_ns))
    scanned = tm_stack_scan(tid, syscall_line, pcs, SCAN_FRAMES, &exact);
  if (!h->words) {
    h->words = calloc(WORDS_CAP, sizeof *h->words);
    h->threads = calloc(THREADS_CAP, sizeof *h->threads);
    if (!h->words || !h->threads) {
      tm_hidden_free(h);
      return false;
    }
  }
  uint32_t oid = internal_object(h, word);
  if (!oid) return false;
  tm_object *o = tm_object_by_id(oid);
  if (o) atomic_fetch_add_explicit(&o->wait_samples, 1, memory_order_relaxed);
  hidden_thread *ht = thread_get(h, tid, now_ns);
  if (!ht) {
    tm_site_add(oid, TM_SITE_UNKNOWN, 1, tick_ns);
    return true;
  }
  if (ht->word != word) { /* another lock (or the first) */
    ht->word = word;
    ht->object = oid;
    ht->stack = 0;
  }
  ht->seen_ns = now_ns;
  /* At most every TM_HIDDEN_SCAN_NS per thread (the call site may change);
   * a failed scan keeps the stack it had. */
  int n = scanned > 0 ? tm_call_chain_clean(pcs, scanned, exact) : 0;
  if (n > 0) {
    ht->stack = tm_site_intern(pcs, (uint32_t)n, true);
    ht->scanned_ns = now_ns;
  }
  tm_site_add(oid, ht->stack ? ht->stack : TM_SITE_UNKNOWN, 1, tick_ns);
  return true;
}

void tm_hidden_free(tm_hidden *h) {
  free(h->words);
  free(h->threads);
  h->words = NULL;
  h->threads = NULL;
}
