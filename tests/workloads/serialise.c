/* serialise: threads that do all their work under one global mutex.
 *
 * Each of T "cruncher" threads repeatedly locks work_lock, spins a chunk of
 * CPU time while holding it, and unlocks. Only one thread can make progress
 * at a time, so the run is serial however many CPUs there are: the others
 * spend most of their life blocked on work_lock. Every thread times its own
 * pthread_mutex_lock calls; the truth is those waits and the lifetimes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

/* Global, so that a tool can name it by symbol. */
pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;

static double work_ms = 250, chunk_ms = 5;

typedef struct cruncher {
  pthread_t thread;
  int index;
  pid_t tid;
  long acquisitions;
  double wait_s, lifetime_s;
} cruncher;

/* All of a cruncher's work happens with work_lock held. */
static void *crunch_locked(void *arg) {
  cruncher *c = arg;
  wl_name_self("cruncher", c->index);
  c->tid = gettid();
  double start = wl_now_s();
  for (double done = 0; done < work_ms; done += chunk_ms) {
    double t0 = wl_now_s();
    wl_check(pthread_mutex_lock(&work_lock), "pthread_mutex_lock");
    c->wait_s += wl_now_s() - t0;
    c->acquisitions++;
    wl_spin_cpu_ms(chunk_ms);
    pthread_mutex_unlock(&work_lock);
  }
  c->lifetime_s = wl_now_s() - start;
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 4;
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "threads, all working under work_lock"},
      {"work-ms", WL_DOUBLE, &work_ms, "CPU time each thread spends holding the lock"},
      {"chunk-ms", WL_DOUBLE, &chunk_ms, "CPU time per lock acquisition"},
  };
  wl_parse_flags(argc, argv, "Threads that do all their work under one global mutex.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (threads < 1 || chunk_ms <= 0) {
    fprintf(stderr, "serialise: need at least one thread and --chunk-ms > 0\n");
    return 2;
  }
  cruncher *cs = calloc((size_t)threads, sizeof *cs);
  if (!cs) return 1;
  double start = wl_now_s();
  for (int i = 0; i < threads; i++) {
    cs[i].index = i;
    wl_check(pthread_create(&cs[i].thread, NULL, crunch_locked, &cs[i]), "pthread_create");
  }
  double wait_s = 0, lifetime_s = 0;
  for (int i = 0; i < threads; i++) {
    wl_check(pthread_join(cs[i].thread, NULL), "pthread_join");
    wait_s += cs[i].wait_s;
    lifetime_s += cs[i].lifetime_s;
  }
  double wall_s = wl_now_s() - start;
  /* Shares of the workers' summed lifetime, and of all program threads'
   * (main is alive the whole run and never touches work_lock). */
  printf("{\"workload\":\"serialise\",\"wall_s\":%.6f,\"threads\":%d,\"lock_symbol\":\"work_lock\","
         "\"function\":\"crunch_locked\",\"wait_s\":%.6f,\"workers_lifetime_s\":%.6f,"
         "\"blocked_share\":%.4f,\"blocked_share_with_main\":%.4f,\"workers\":[",
         wall_s, threads, wait_s, lifetime_s, wait_s / lifetime_s, wait_s / (lifetime_s + wall_s));
  for (int i = 0; i < threads; i++) {
    const cruncher *c = &cs[i];
    printf("%s{\"tid\":%d,\"name\":\"cruncher-%d\",\"lifetime_s\":%.6f,\"acquisitions\":%ld,"
           "\"wait_s\":%.6f}",
           i ? "," : "", (int)c->tid, c->index, c->lifetime_s, c->acquisitions, c->wait_s);
  }
  printf("]}\n");
  free(cs);
  return 0;
}
