/* static_threads: a statically linked program with threads whose states are
 * known, for the launcher's external mode (LD_PRELOAD cannot reach it, so
 * it is watched from outside). For --seconds, "st-spin" computes, "st-sleep"
 * sleeps and "st-lock" waits for a mutex main holds all along; then main
 * lets go, joins them and exits with --exit. Its first line on stdout is
 * "started" (a test tells from it whether the program ran), its last the
 * truth as JSON. No wl.c: it must link with -static alone. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static double seconds = 1.0;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *spin(void *arg) {
  (void)arg;
  volatile unsigned long x = 0;
  while (!stop) x++;
  return NULL;
}

static void *sleeper(void *arg) {
  (void)arg;
  struct timespec t = {0, 20 * 1000 * 1000};
  while (!stop) nanosleep(&t, NULL);
  return NULL;
}

static void *locker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&held);
  pthread_mutex_unlock(&held);
  return NULL;
}

int main(int argc, char **argv) {
  int code = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--exit")) code = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: static_threads [--seconds S] [--exit CODE]\n");
      return 2;
    }
  }
  printf("started\n");
  fflush(stdout);
  pthread_mutex_lock(&held);
  void *(*bodies[])(void *) = {spin, sleeper, locker};
  const char *names[] = {"st-spin", "st-sleep", "st-lock"};
  pthread_t t[3];
  for (int i = 0; i < 3; i++) {
    pthread_create(&t[i], NULL, bodies[i], NULL);
    pthread_setname_np(t[i], names[i]);
  }
  double t0 = now_s();
  struct timespec nap = {0, 10 * 1000 * 1000};
  while (now_s() - t0 < seconds) nanosleep(&nap, NULL);
  stop = 1;
  pthread_mutex_unlock(&held);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("{\"threads\": [\"st-spin\", \"st-sleep\", \"st-lock\"], \"seconds\": %.3f, "
         "\"exit\": %d}\n",
         now_s() - t0, code);
  return code;
}
