/* The probe's own stack walk (unwind.h) against glibc's backtrace(3),
 * which runs libgcc's unwinder: above the frame that calls both, the two
 * must give the same return addresses, on the thread's own stack (also
 * past a frame bigger than the copy a foreign stack gets), on another
 * thread's, and on a user context's stack (makecontext), which the walk
 * copies first; and again from the rows the first walk kept. Prints the
 * cost of a walk. */
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "tm_check.h"
#include "unwind.h"

#define MAX 32

typedef struct walks {
  void *ours[MAX], *theirs[MAX];
  int n_ours, n_theirs;
} walks;

/* Both walks from one frame; their first entries are return addresses into
 * it from two different calls, so only what lies above is compared. */
__attribute__((noinline)) static void both(walks *w) {
  w->n_ours = tm_backtrace(w->ours, MAX);
  w->n_theirs = backtrace(w->theirs, MAX);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void deep(walks *w, int depth) {
  if (depth == 0) both(w);
  else deep(w, depth - 1);
  __asm__ volatile("" ::: "memory");
}

/* A frame larger than FOREIGN_COPY_BYTES (unwind.c) between both and main. */
__attribute__((noinline)) static void big_frame(walks *w) {
  volatile char pad[48 * 1024];
  pad[0] = 1;
  deep(w, 2);
  pad[sizeof pad - 1] = pad[0];
}

/* Same addresses above the calling frame, and at least `want` of them.
 * backtrace(3) may start a frame later (a sanitizer's interceptor). */
static void check_same(const walks *w, int want, const char *what) {
  int from = 1;
  while (from < w->n_theirs && w->n_ours > 1 && w->theirs[from] != w->ours[1]) from++;
  int same = 0;
  for (int i = 1; i < w->n_ours && from + i - 1 < w->n_theirs && w->ours[i] == w->theirs[from + i - 1];
       i++)
    same++;
  printf("%s: ours %d frames, backtrace(3) %d, %d the same above the caller\n", what, w->n_ours,
         w->n_theirs, same);
  CHECK(same >= want);
}

static void *on_thread(void *arg) {
  deep(arg, 5);
  return NULL;
}

static walks in_context;
static ucontext_t main_ctx, user_ctx;

static void context_main(void) { deep(&in_context, 4); }

int main(void) {
  walks w;
  deep(&w, 6); /* deep(x7) and main above both */
  check_same(&w, 8, "own stack");
  /* Again, every row from the thread's cache now (cfi.h). */
  memset(&w, 0, sizeof w);
  deep(&w, 6);
  check_same(&w, 8, "own stack, rows cached");

  big_frame(&w);
  check_same(&w, 5, "past a 48 KiB frame");

  pthread_t t;
  CHECK(pthread_create(&t, NULL, on_thread, &w) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  check_same(&w, 6, "another thread");

  size_t size = 256 * 1024;
  char *stack = malloc(size);
  CHECK(stack != NULL);
  CHECK(getcontext(&user_ctx) == 0);
  user_ctx.uc_stack.ss_sp = stack;
  user_ctx.uc_stack.ss_size = size;
  user_ctx.uc_link = &main_ctx;
  makecontext(&user_ctx, context_main, 0);
  CHECK(swapcontext(&main_ctx, &user_ctx) == 0);
  check_same(&in_context, 5, "user context (copied)");
  free(stack);

  enum { ROUNDS = 20000 };
  struct timespec a, b;
  void *pcs[MAX];
  int frames = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < ROUNDS; i++) frames += tm_backtrace(pcs, MAX);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / ROUNDS;
  printf("walk: %.0f ns for %d frames\n", ns, frames / ROUNDS);
  return 0;
}
