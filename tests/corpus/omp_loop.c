/* OpenMP (GCC's libgomp): a parallel loop run ROUNDS times whose first
 * quarter of iterations costs ten times the rest. schedule(static) gives
 * the first thread all the heavy ones, and the others wait for it at the
 * loop's implicit barrier; "dynamic" hands iterations out as threads free
 * up. Each thread clocks its own share of each loop; the wait at the
 * barrier is the loop's end (the main thread's clock after it) less when
 * the thread finished its share. Prints the truth as one JSON line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64
#define ITERATIONS 4000

static double done_at[MAX_THREADS], barrier_s[MAX_THREADS];
static int tids[MAX_THREADS];

static double work(int i) {
  int n = i < ITERATIONS / 4 ? 20000 : 2000;
  double s = 0;
  for (int k = 0; k < n; k++) s += sin(k * 0.001 + i);
  return s;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 20;
  int dynamic = argc > 2 && strcmp(argv[2], "dynamic") == 0;
  double sum = 0;
  int threads = 0;
  for (int r = 0; r < rounds; r++) {
#pragma omp parallel reduction(+ : sum)
    {
      int me = omp_get_thread_num();
      if (me < MAX_THREADS) tids[me] = gettid();
#pragma omp single nowait
      threads = omp_get_num_threads();
      if (dynamic) {
#pragma omp for schedule(dynamic, 16) nowait
        for (int i = 0; i < ITERATIONS; i++) sum += work(i);
      } else {
#pragma omp for schedule(static) nowait
        for (int i = 0; i < ITERATIONS; i++) sum += work(i);
      }
      if (me < MAX_THREADS) done_at[me] = omp_get_wtime();
    } /* the implicit barrier the threads wait at */
    double end = omp_get_wtime();
    for (int t = 0; t < threads && t < MAX_THREADS; t++) barrier_s[t] += end - done_at[t];
  }
  printf("{\"schedule\":\"%s\",\"rounds\":%d,\"sum\":%.3f,\"threads\":[",
         dynamic ? "dynamic" : "static", rounds, sum);
  for (int t = 0; t < threads && t < MAX_THREADS; t++)
    printf("%s{\"index\":%d,\"tid\":%d,\"barrier_s\":%.6f}", t ? "," : "", t, tids[t],
           barrier_s[t]);
  printf("]}\n");
  return 0;
}
