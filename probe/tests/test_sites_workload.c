/* Programs for test_sites, run under the probe.
 *   test_sites_workload mutex    3 threads contend one mutex from contend_here
 *   test_sites_workload rand     4 threads share rand() from rand_loop; exits 1
 *                                when the values drawn differ from a plain run
 *   test_sites_workload handler  rand, with its own handler on the probe's
 *                                capture signal; exits 1 when it ever runs
 *   test_sites_workload idle     mutex for 0.1 s, then nothing for 1.6 s */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared_counter;
static _Atomic int handler_runs;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The call site the test looks for: not inlined, not a tail call. The
 * holder sleeps, so the others find the lock busy whatever the load; it
 * sleeps after unlocking too, so that a woken waiter takes the lock: a
 * holder that relocks at once starves the waiters, who then stay in one
 * lock call each for the whole run (seen: 2-4 contentions under load). */
__attribute__((noinline)) static void contend_here(void) {
  pthread_mutex_lock(&lock);
  shared_counter++;
  usleep(200);
  pthread_mutex_unlock(&lock);
  usleep(100);
}

static double mutex_seconds = 0.4;

static void *mutex_worker(void *arg) {
  (void)arg;
  double end = now_s() + mutex_seconds;
  while (now_s() < end) contend_here();
  return NULL;
}

typedef struct draws {
  unsigned long long sum;
  long calls;
} draws;

/* Draws for 0.5 s; sums what it drew. The clock is read every 1024 calls. */
__attribute__((noinline)) static void rand_loop(draws *d) {
  double end = now_s() + 0.5;
  do {
    for (int i = 0; i < 1024; i++) d->sum += (unsigned long long)rand();
    d->calls += 1024;
  } while (now_s() < end);
}

static void *rand_worker(void *arg) {
  rand_loop(arg);
  return NULL;
}

static void on_signal(int sig) {
  (void)sig;
  atomic_fetch_add(&handler_runs, 1);
}

static int run(void *(*fn)(void *), draws *d, int threads) {
  pthread_t t[THREADS];
  for (int i = 0; i < threads; i++)
    if (pthread_create(&t[i], NULL, fn, &d[i])) return -1;
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  draws d[THREADS] = {{0, 0}};
  if (!strcmp(mode, "mutex")) return run(mutex_worker, d, 3) ? 2 : 0;
  if (!strcmp(mode, "idle")) {
    mutex_seconds = 0.1;
    if (run(mutex_worker, d, 3)) return 2;
    usleep(1600000);
    return 0;
  }
  if (strcmp(mode, "rand") && strcmp(mode, "handler")) return 2;
  if (!strcmp(mode, "handler")) {
    /* The probe reads blocked threads' stacks without signals: a handler
     * on any real-time signal must never run. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) sigaction(sig, &sa, NULL);
  }
  srand(7);
  if (run(rand_worker, d, THREADS)) return 2;
  /* Whatever the interleaving, the threads drew the first N values of the
   * sequence (N = all their calls): a lost or repeated call changes the
   * total. */
  unsigned long long total = 0, expect = 0;
  long calls = 0;
  for (int i = 0; i < THREADS; i++) {
    total += d[i].sum;
    calls += d[i].calls;
  }
  srand(7);
  for (long i = 0; i < calls; i++) expect += (unsigned long long)rand();
  if (total != expect) {
    fprintf(stderr, "rand totals differ: %llu != %llu\n", total, expect);
    return 1;
  }
  if (atomic_load(&handler_runs)) {
    fprintf(stderr, "the program's own handler ran %d times\n", atomic_load(&handler_runs));
    return 1;
  }
  return 0;
}
