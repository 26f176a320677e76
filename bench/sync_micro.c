/* tm-bench-sync: microbenchmarks of the pthread calls threadmon interposes.
 *
 *   tm-bench-sync BENCH OPS [THREADS]
 *
 * Prints one JSON line: {"bench":..., "ops":..., "threads":..., "ns_per_op":...}.
 * Only the measured loop is timed, so start-up of a preloaded tool is not
 * counted. Single-threaded loops use the thread's CPU clock, the others wall
 * time (see "clock" in the output). An idle extra thread is always alive
 * (see bench_common.h). */
#include "bench_common.h"

#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

typedef struct {
  long ops;     /* operations per worker */
  int threads;  /* workers */
} bench_args;

/* The pinned two-thread benchmarks also report both threads' CPU time per
 * operation ("cpu_ns_per_op"): what the kernel and a tool add to each
 * switch, without the time other programs on the same CPU take. */
static uint64_t pair_cpu_ns;
static uint64_t partner_cpu_ns;

/* ---- uncontended: one thread, lock never busy; thread CPU time ---- */

static double bench_mutex(const bench_args *a) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  }
  return (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
}

static double bench_rwlock_read(const bench_args *a) {
  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++) {
    pthread_rwlock_rdlock(&rw);
    pthread_rwlock_unlock(&rw);
  }
  return (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
}

static double bench_sem(const bench_args *a) {
  sem_t s;
  sem_init(&s, 0, 0);
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++) {
    sem_post(&s);
    sem_wait(&s);
  }
  double ns = (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
  sem_destroy(&s);
  return ns;
}

static double bench_rwlock_write(const bench_args *a) {
  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++) {
    pthread_rwlock_wrlock(&rw);
    pthread_rwlock_unlock(&rw);
  }
  return (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
}

/* A free mutex taken by trylock: what a polling loop pays when it wins. */
static double bench_trylock(const bench_args *a) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++) {
    if (pthread_mutex_trylock(&m) != 0) exit(2);
    pthread_mutex_unlock(&m);
  }
  return (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
}

static double bench_spin(const bench_args *a) {
  pthread_spinlock_t s;
  pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++) {
    pthread_spin_lock(&s);
    pthread_spin_unlock(&s);
  }
  double ns = (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
  pthread_spin_destroy(&s);
  return ns;
}

/* pthread_cond_signal with nobody waiting: a producer's common case. */
static double bench_cond_signal(const bench_args *a) {
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++)
    pthread_cond_signal(&c);
  return (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
}

/* ---- contended mutex: every worker hammers one lock ---- */

static pthread_mutex_t shared_mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile long shared_counter;

static void *contended_worker(void *arg) {
  const bench_args *a = arg;
  for (long i = 0; i < a->ops; i++) {
    pthread_mutex_lock(&shared_mutex);
    shared_counter++;
    pthread_mutex_unlock(&shared_mutex);
  }
  return NULL;
}

static pthread_t workers[64];

static void run_workers(const bench_args *a, void *(*fn)(void *), void *arg) {
  for (int i = 0; i < a->threads; i++)
    if (pthread_create(&workers[i], NULL, fn, arg) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      exit(2);
    }
  for (int i = 0; i < a->threads; i++)
    pthread_join(workers[i], NULL);
}

/* ns per acquisition, all workers together (throughput view). */
static double bench_mutex_contended(const bench_args *a) {
  uint64_t t0 = bench_now_ns();
  run_workers(a, contended_worker, (void *)a);
  return (double)(bench_now_ns() - t0) / ((double)a->ops * a->threads);
}

/* ---- cond ping-pong: two threads on one CPU hand a token back and forth.
 * Pinned because cross-CPU wake-ups on this VM (~45 us) would hide any
 * tool's cost. ns per round trip. ---- */

static pthread_mutex_t pp_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond = PTHREAD_COND_INITIALIZER;
static int pp_turn; /* 0 = main's turn, 1 = partner's */

static void pp_play(long rounds, int me) {
  for (long i = 0; i < rounds; i++) {
    pthread_mutex_lock(&pp_mutex);
    while (pp_turn != me)
      pthread_cond_wait(&pp_cond, &pp_mutex);
    pp_turn = !me;
    pthread_cond_signal(&pp_cond);
    pthread_mutex_unlock(&pp_mutex);
  }
}

static void *pp_partner(void *arg) {
  const bench_args *a = arg;
  bench_pin_to_cpu(0);
  uint64_t c0 = bench_thread_cpu_ns();
  pp_play(a->ops, 1);
  partner_cpu_ns = bench_thread_cpu_ns() - c0;
  return NULL;
}

static double bench_cond_pingpong(const bench_args *a) {
  bench_pin_to_cpu(0);
  pthread_t t;
  pthread_create(&t, NULL, pp_partner, (void *)a);
  uint64_t t0 = bench_now_ns(), c0 = bench_thread_cpu_ns();
  pp_play(a->ops, 0);
  pair_cpu_ns = bench_thread_cpu_ns() - c0;
  pthread_join(t, NULL);
  pair_cpu_ns += partner_cpu_ns;
  return (double)(bench_now_ns() - t0) / (double)a->ops;
}

/* ---- barrier: two threads pinned to one CPU meet OPS times ---- */

static pthread_barrier_t barrier;

static void *barrier_worker(void *arg) {
  const bench_args *a = arg;
  bench_pin_to_cpu(0);
  uint64_t c0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++)
    pthread_barrier_wait(&barrier);
  partner_cpu_ns = bench_thread_cpu_ns() - c0;
  return NULL;
}

static double bench_barrier(const bench_args *a) {
  bench_pin_to_cpu(0);
  pthread_barrier_init(&barrier, NULL, 2);
  pthread_t t;
  pthread_create(&t, NULL, barrier_worker, (void *)a);
  uint64_t t0 = bench_now_ns(), c0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++)
    pthread_barrier_wait(&barrier);
  pair_cpu_ns = bench_thread_cpu_ns() - c0;
  pthread_join(t, NULL);
  pair_cpu_ns += partner_cpu_ns;
  double ns = (double)(bench_now_ns() - t0) / (double)a->ops;
  pthread_barrier_destroy(&barrier);
  return ns;
}

/* ---- context switches: two threads pinned to one CPU yield to each
 * other OPS times each; what a tool adds to every switch of the kernel ---- */

static void *yield_worker(void *arg) {
  const bench_args *a = arg;
  bench_pin_to_cpu(0);
  uint64_t c0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++)
    sched_yield();
  partner_cpu_ns = bench_thread_cpu_ns() - c0;
  return NULL;
}

static double bench_yield_pingpong(const bench_args *a) {
  bench_pin_to_cpu(0);
  pthread_t t;
  pthread_create(&t, NULL, yield_worker, (void *)a);
  uint64_t t0 = bench_now_ns(), c0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++)
    sched_yield();
  pair_cpu_ns = bench_thread_cpu_ns() - c0;
  pthread_join(t, NULL);
  pair_cpu_ns += partner_cpu_ns;
  pair_cpu_ns /= 2; /* per switch, like the wall figure */
  return (double)(bench_now_ns() - t0) / (2.0 * (double)a->ops);
}

/* ---- thread create + join of a thread that does nothing ---- */

static void *noop_thread(void *arg) { return arg; }

static double bench_create_join(const bench_args *a) {
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < a->ops; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, noop_thread, NULL) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      exit(2);
    }
    pthread_join(t, NULL);
  }
  return (double)(bench_now_ns() - t0) / (double)a->ops;
}

/* ---- user threads: a fiber and the thread's own context switching back
 * and forth; ns per swapcontext (each saves and restores the signal mask:
 * one rt_sigprocmask syscall) ---- */

static ucontext_t swap_main, swap_fiber;

static void swap_loop(void) {
  for (;;) swapcontext(&swap_fiber, &swap_main);
}

static double bench_swapcontext(const bench_args *a) {
  static char stack[64 * 1024] __attribute__((aligned(16)));
  getcontext(&swap_fiber);
  swap_fiber.uc_stack.ss_sp = stack;
  swap_fiber.uc_stack.ss_size = sizeof stack;
  swap_fiber.uc_link = NULL;
  makecontext(&swap_fiber, swap_loop, 0);
  long rounds = a->ops / 2 > 0 ? a->ops / 2 : 1;
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < rounds; i++) swapcontext(&swap_main, &swap_fiber); /* and back */
  return (double)(bench_thread_cpu_ns() - t0) / (double)(2 * rounds);
}

/* The same in bursts of 400 switches, 12 ms apart, only the bursts timed:
 * under the probe every switch's event is then kept (an LWP's ring holds
 * 1,024 events per 10 ms tick; the plain loop above switches faster than
 * that and most of its events are dropped and counted, a cheaper path). */
static double bench_swapcontext_burst(const bench_args *a) {
  bench_args one = {.ops = 2, .threads = 1};
  bench_swapcontext(&one); /* makes the fiber */
  long rounds = a->ops / 2 > 0 ? a->ops / 2 : 1, done = 0;
  uint64_t spent = 0;
  while (done < rounds) {
    long burst = rounds - done < 200 ? rounds - done : 200;
    uint64_t t0 = bench_thread_cpu_ns();
    for (long i = 0; i < burst; i++) swapcontext(&swap_main, &swap_fiber);
    spent += bench_thread_cpu_ns() - t0;
    done += burst;
    struct timespec gap = {0, 12000000};
    nanosleep(&gap, NULL);
  }
  return (double)spent / (double)(2 * rounds);
}

/* ---- syscall(): the probe interposes it for futex waits ---- */

/* A FUTEX_WAIT whose word no longer holds the value: the kernel answers
 * EAGAIN at once (a futex lock's waiter that lost a race). */
static double bench_futex_eagain(const bench_args *a) {
  static uint32_t word = 1;
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++)
    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  return (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
}

/* Any other number: passed straight through. */
static double bench_syscall_gettid(const bench_args *a) {
  uint64_t t0 = bench_thread_cpu_ns();
  for (long i = 0; i < a->ops; i++) syscall(SYS_gettid);
  return (double)(bench_thread_cpu_ns() - t0) / (double)a->ops;
}

typedef struct {
  const char *name;
  double (*run)(const bench_args *);
  int threads; /* fixed worker count, 0 = from the command line */
  const char *clock; /* what run() measures */
} bench_entry;

static const bench_entry benches[] = {
    {"mutex", bench_mutex, 1, "thread-cpu"},
    {"mutex-contended", bench_mutex_contended, 0, "wall"},
    {"cond-pingpong", bench_cond_pingpong, 2, "wall"},
    {"rwlock-read", bench_rwlock_read, 1, "thread-cpu"},
    {"barrier", bench_barrier, 2, "wall"},
    {"sem", bench_sem, 1, "thread-cpu"},
    {"rwlock-write", bench_rwlock_write, 1, "thread-cpu"},
    {"trylock", bench_trylock, 1, "thread-cpu"},
    {"spin", bench_spin, 1, "thread-cpu"},
    {"cond-signal", bench_cond_signal, 1, "thread-cpu"},
    {"yield-pingpong", bench_yield_pingpong, 2, "wall"},
    {"create-join", bench_create_join, 1, "wall"},
    {"swapcontext", bench_swapcontext, 1, "thread-cpu"},
    {"swapcontext-burst", bench_swapcontext_burst, 1, "thread-cpu"},
    {"futex-eagain", bench_futex_eagain, 1, "thread-cpu"},
    {"syscall-gettid", bench_syscall_gettid, 1, "thread-cpu"},
};

static void usage(void) {
  fprintf(stderr, "usage: tm-bench-sync BENCH OPS [THREADS]\nBENCH:");
  for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
    fprintf(stderr, " %s", benches[i].name);
  fprintf(stderr, "\n");
  exit(2);
}

int main(int argc, char **argv) {
  if (argc < 3)
    usage();
  const bench_entry *e = NULL;
  for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
    if (strcmp(argv[1], benches[i].name) == 0)
      e = &benches[i];
  if (!e)
    usage();
  bench_args a = {.ops = bench_parse_count(argv[2], "OPS"), .threads = e->threads};
  if (a.threads == 0) {
    a.threads = argc > 3 ? (int)bench_parse_count(argv[3], "THREADS") : 2;
    if (a.threads > 64)
      usage();
    a.ops /= a.threads; /* OPS is the total across workers */
  }
  bench_start_idle_thread();
  double ns = e->run(&a);
  printf("{\"bench\":\"%s\",\"ops\":%ld,\"threads\":%d,\"clock\":\"%s\",\"ns_per_op\":%.2f",
         e->name, a.ops * (e->threads == 0 ? a.threads : 1), a.threads, e->clock, ns);
  if (pair_cpu_ns) printf(",\"cpu_ns_per_op\":%.2f", (double)pair_cpu_ns / (double)a.ops);
  printf("}\n");
  return 0;
}
