/* heap_locks: sync objects that live on the heap, to be named by where the
 * program made them.
 *
 * make_table() mallocs a struct table and initialises its mutex with
 * pthread_mutex_init; make_gate() mallocs a semaphore and sem_init's it;
 * make_counter() mallocs a mutex set by a static initialiser (no init
 * call), so only its first use can name it. W workers contend on all three,
 * and on the locks of a global struct's array of shards (registry), to be
 * named by the member the debug information says each is.
 * The truth printed at exit is the source line of each initialiser call and
 * of the counter's lock call, so that a test compares names with the source
 * instead of with numbers that move on every edit.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "wl.h"

struct table {
  long rows;
  pthread_mutex_t lock; /* not at offset 0: the object is inside the block */
  char name[16];
};

struct counter {
  pthread_mutex_t lock;
  long value;
};

/* A global: each shard's lock is named by its member, registry.shards[i].lock. */
struct shard {
  long hits;
  pthread_mutex_t lock;
};
struct registry {
  long lookups;
  struct shard shards[2];
} registry = {.shards = {{.lock = PTHREAD_MUTEX_INITIALIZER}, {.lock = PTHREAD_MUTEX_INITIALIZER}}};

static int workers = 4, rounds = 40;
static double hold_ms = 0.2;
static struct table *table;
static sem_t *gate;
static struct counter *counter;

static const int table_init_line = __LINE__ + 6;
__attribute__((noinline)) static struct table *make_table(const char *name) {
  struct table *t = calloc(1, sizeof *t);
  if (!t) abort();
  snprintf(t->name, sizeof t->name, "%s", name);
  /* Not a tail call: the call returns into make_table. */
  wl_check(pthread_mutex_init(&t->lock, NULL), "pthread_mutex_init");
  return t;
}

static const int gate_init_line = __LINE__ + 5;
__attribute__((noinline)) static sem_t *make_gate(void) {
  sem_t *s = malloc(sizeof *s);
  if (!s) abort();
  /* One thread at a time passes. */
  if (sem_init(s, 0, 1) != 0) abort();
  return s;
}

/* A heap mutex set by a static initialiser: pthread_mutex_init is never called. */
__attribute__((noinline)) static struct counter *make_counter(void) {
  struct counter *c = malloc(sizeof *c);
  if (!c) abort();
  *c = (struct counter){.lock = PTHREAD_MUTEX_INITIALIZER, .value = 0};
  return c;
}

static const int counter_lock_line = __LINE__ + 3;
__attribute__((noinline)) static void bump_counter(void) {
  /* The counter's first use names it. */
  wl_check(pthread_mutex_lock(&counter->lock), "pthread_mutex_lock");
  counter->value++;
  wl_sleep_ms(hold_ms);
  pthread_mutex_unlock(&counter->lock);
}

static void *worker(void *arg) {
  wl_name_self("worker", (int)(long)arg);
  for (int r = 0; r < rounds; r++) {
    wl_check(pthread_mutex_lock(&table->lock), "pthread_mutex_lock");
    table->rows++;
    wl_sleep_ms(hold_ms);
    pthread_mutex_unlock(&table->lock);
    while (sem_wait(gate) != 0) continue;
    wl_sleep_ms(hold_ms);
    sem_post(gate);
    bump_counter();
    struct shard *sh = &registry.shards[r % 2];
    wl_check(pthread_mutex_lock(&sh->lock), "pthread_mutex_lock");
    sh->hits++;
    wl_sleep_ms(hold_ms);
    pthread_mutex_unlock(&sh->lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"workers", WL_INT, &workers, "threads contending on the heap locks"},
      {"rounds", WL_INT, &rounds, "times each worker takes each lock"},
      {"hold-ms", WL_DOUBLE, &hold_ms, "time each lock is held"},
  };
  wl_parse_flags(argc, argv, "heap locks made by functions, named by where they were made",
                 flags, 3);
  if (workers < 1 || workers > 64 || rounds < 1) {
    fprintf(stderr, "heap_locks: --workers 1..64 and --rounds >= 1\n");
    return 2;
  }
  table = make_table("orders");
  gate = make_gate();
  counter = make_counter();
  pthread_t threads[64];
  for (int i = 0; i < workers; i++)
    wl_check(pthread_create(&threads[i], NULL, worker, (void *)(long)i), "pthread_create");
  for (int i = 0; i < workers; i++) pthread_join(threads[i], NULL);
  printf(
      "{\"workers\": %d, \"rounds\": %d, \"rows\": %ld, \"counter\": %ld, "
      "\"table_init_line\": %d, \"gate_init_line\": %d, \"counter_lock_line\": %d, "
      "\"table_lock_offset\": %zu, \"global\": \"registry\", \"shard_locks\": "
      "[\"registry.shards[0].lock\", \"registry.shards[1].lock\"], \"shard_hits\": %ld}\n",
      workers, rounds, table->rows, counter->value, table_init_line, gate_init_line,
      counter_lock_line, offsetof(struct table, lock),
      registry.shards[0].hits + registry.shards[1].hits);
  return 0;
}
