/* woken_wait: ground truth for the wait for a CPU after a wake-up, in a
 * sleep no wrapper sees.
 *
 * "sleeper-0" (nice 5) and "hog-0" (nice 0) share CPU 0. The sleeper
 * repeats: spin X ms of its own CPU time, then sleep Y ms through the raw
 * nanosleep system call (what a program that blocks in poll, read or a
 * futex of its own does: nothing for an interposer to see). Woken, it waits
 * for the hog to give up CPU 0. The hog spins until the sleeper is done.
 *
 * Truth, measured by the sleeper itself from its create: its CPU clock, its
 * run-queue time (schedstat run_delay, 0 at the create), the wall time in
 * the system call, and how much of that was the wait for a CPU after the
 * wake-up (run_delay's growth across the call: a sleeping thread is not
 * queued). sleeping_pct is the call time less that wait.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wl.h"

static double spin_ms = 2, sleep_ms = 8;
static int repeats = 30, nice_level = 5;
static volatile int sleeper_done, hog_spinning;

typedef struct sleeper {
  pthread_t thread;
  pid_t tid;
  double created_s, lifetime_s, cpu_s, slept_s, woken_s, runq_s;
} sleeper;

static void pin_to_cpu0(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("woken_wait: sched_setaffinity");
}

static void *hog(void *arg) {
  wl_name_self("hog", 0);
  pin_to_cpu0();
  hog_spinning = 1;
  while (!sleeper_done) wl_busy_loop(10000);
  return arg;
}

static void *sleep_loop(void *arg) {
  sleeper *s = arg;
  wl_name_self("sleeper", 0);
  s->tid = gettid();
  pin_to_cpu0();
  if (setpriority(PRIO_PROCESS, 0, nice_level) != 0) perror("woken_wait: setpriority");
  /* Not before the hog is on CPU 0: on a loaded machine it could start late,
   * and a wake-up with nobody to wait for makes no truth to check. */
  while (!hog_spinning) sched_yield();
  for (int r = 0; r < repeats; r++) {
    wl_spin_cpu_ms(spin_ms);
    struct timespec ts = {0, (long)(sleep_ms * 1e6)};
    double d0 = wl_run_delay_s(), t0 = wl_now_s();
    syscall(SYS_nanosleep, &ts, NULL);
    double t1 = wl_now_s(), d1 = wl_run_delay_s();
    s->slept_s += t1 - t0;
    if (d0 >= 0 && d1 >= 0) s->woken_s += d1 - d0;
  }
  double delay = wl_run_delay_s();
  s->cpu_s = wl_thread_cpu_s(); /* 0 at the create, like run_delay */
  s->runq_s = delay >= 0 ? delay : 0;
  s->lifetime_s = wl_now_s() - s->created_s;
  sleeper_done = 1;
  return NULL;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"spin-ms", WL_DOUBLE, &spin_ms, "CPU time the sleeper spins per round"},
      {"sleep-ms", WL_DOUBLE, &sleep_ms, "time the sleeper asks to sleep per round"},
      {"repeats", WL_INT, &repeats, "rounds"},
      {"nice", WL_INT, &nice_level, "the sleeper's nice level (the hog's is 0)"},
  };
  wl_parse_flags(argc, argv,
                 "A niced thread sleeps in raw system calls beside a CPU hog on CPU 0.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  sleeper s = {0};
  pthread_t h;
  double start = wl_now_s();
  wl_check(pthread_create(&h, NULL, hog, NULL), "pthread_create");
  s.created_s = wl_now_s();
  wl_check(pthread_create(&s.thread, NULL, sleep_loop, &s), "pthread_create");
  wl_check(pthread_join(s.thread, NULL), "pthread_join");
  wl_check(pthread_join(h, NULL), "pthread_join");
  const double life = s.lifetime_s;
  printf("{\"workload\":\"woken_wait\",\"wall_s\":%.6f,\"threads\":[{\"tid\":%d,"
         "\"name\":\"sleeper-0\","
         "\"lifetime_s\":%.6f,\"cpu_s\":%.6f,\"slept_s\":%.6f,\"woken_s\":%.6f,\"runq_s\":%.6f,"
         "\"on_cpu_pct\":%.2f,\"runnable_pct\":%.2f,\"sleeping_pct\":%.2f}]}\n",
         wl_now_s() - start, (int)s.tid, life, s.cpu_s, s.slept_s, s.woken_s, s.runq_s,
         100.0 * s.cpu_s / life, 100.0 * s.runq_s / life,
         100.0 * (s.slept_s - s.woken_s) / life);
  return 0;
}
