/* Stack scanning of a blocked thread (stackscan.h): a thread waits in a
 * raw futex call three known functions deep; the scan of its stack, made
 * from another thread without stopping it, must hold the blocking PC and
 * return addresses inside each of those functions in call order. A scan
 * with a stale syscall line (the thread left the call) must give only that
 * call's chain: the unwound frames when the thread went on without
 * touching them (it woke between the sampler's reads: the only sighting of
 * a lock on a loaded machine), nothing when its next call wrote over them.
 * Also the call-instruction test on hand-made code bytes. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "futex_line.h"
#include "stackscan.h"
#include "tm_check.h"

/* One waiting thread: its futex word, what it does once woken. */
typedef struct waiter_run {
  _Atomic uint32_t word, tid, woke, release;
  bool call_on; /* once woken, call on from the function that waited */
  pthread_t thread;
} waiter_run;

/* Out of its wait; no call while it spins: below its frame the stack stays
 * as it was. */
static inline __attribute__((always_inline)) void spin(waiter_run *r) {
  atomic_store(&r->woke, 1);
  while (!atomic_load(&r->release)) __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void elsewhere(waiter_run *r) {
  spin(r);
  __asm__ volatile("" ::: "memory");
}

/* noinline and a call after the call: each frame keeps its return address. */
__attribute__((noinline)) static void inner(waiter_run *r) {
  /* Arguments in registers only: this call and the next leave their return
   * addresses in the same slot. */
  while (atomic_load(&r->word) == 0) syscall(SYS_futex, &r->word, FUTEX_WAIT_PRIVATE, 0, NULL);
  /* Its next call's return address goes where the wait's was. */
  if (r->call_on) elsewhere(r);
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void middle(waiter_run *r) {
  inner(r);
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void outer(waiter_run *r) {
  middle(r);
  __asm__ volatile("" ::: "memory");
}
static void *waiter(void *arg) {
  waiter_run *r = arg;
  atomic_store(&r->tid, (uint32_t)syscall(SYS_gettid));
  outer(r);
  if (!r->call_on) spin(r);
  return NULL;
}

/* Starts r's thread and returns its syscall line once it waits in futex. */
static uint32_t start_waiting(waiter_run *r, char *line, size_t n) {
  CHECK(pthread_create(&r->thread, NULL, waiter, r) == 0);
  uint32_t tid;
  while (!(tid = atomic_load(&r->tid))) sched_yield();
  CHECK(tm_wait_futex_line(tid, line, n));
  return tid;
}

/* Wakes r's thread and waits until it is out of its wait, spinning. */
static void wake(waiter_run *r) {
  atomic_store(&r->word, 1);
  syscall(SYS_futex, &r->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  while (!atomic_load(&r->woke)) sched_yield();
}

static void finish(waiter_run *r) {
  atomic_store(&r->release, 1);
  CHECK(pthread_join(r->thread, NULL) == 0);
}

/* Index of the first frame inside fn (fn .. fn + 256 bytes), or -1. */
static int frame_in(void **pcs, int n, void (*fn)(waiter_run *)) {
  uintptr_t a = (uintptr_t)fn;
  for (int i = 0; i < n; i++)
    if ((uintptr_t)pcs[i] > a && (uintptr_t)pcs[i] < a + 256) return i;
  return -1;
}

int main(void) {
  /* Call instructions, each followed by the return address r. */
  const unsigned char direct[] = {0x90, 0x90, 0xE8, 1, 2, 3, 4, 0};
  CHECK(tm_after_call(direct + 7));
  const unsigned char via_rip[] = {0x90, 0xFF, 0x15, 1, 2, 3, 4, 0};
  CHECK(tm_after_call(via_rip + 7));
  const unsigned char via_reg[] = {0x90, 0x90, 0x90, 0x90, 0x90, 0xFF, 0xD0, 0};
  CHECK(tm_after_call(via_reg + 7));
  const unsigned char not_call[] = {0x48, 0x89, 0xE5, 0x48, 0x83, 0xEC, 0x10, 0};
  CHECK(!tm_after_call(not_call + 7));

  static waiter_run went_on = {.call_on = false};
  char line[256];
  uint32_t tid = start_waiting(&went_on, line, sizeof line);

  void *pcs[16];
  int exact = 0;
  int n = tm_stack_scan(tid, line, pcs, 16, &exact);
  int i_inner = frame_in(pcs, n, inner), i_middle = frame_in(pcs, n, middle),
      i_outer = frame_in(pcs, n, outer);
  printf("%d frames (%d unwound); inner at %d, middle at %d, outer at %d\n", n, exact, i_inner,
         i_middle, i_outer);
  CHECK(n >= 4);
  CHECK(i_inner >= 1 && i_middle > i_inner && i_outer > i_middle);
  /* Again, the rows from this thread's cache now (cfi.h): the same frames. */
  void *again[16];
  CHECK_EQ(tm_stack_scan(tid, line, again, 16, NULL), n);
  CHECK(memcmp(again, pcs, (size_t)n * sizeof *pcs) == 0);

  /* Woken after the line was read, it went on without a call: the line is
   * stale, the unwound chain of its wait still lies in its stack. */
  wake(&went_on);
  int stale_exact = -1;
  int stale = tm_stack_scan(tid, line, again, 16, &stale_exact);
  printf("stale line, frames untouched: %d frames (%d unwound)\n", stale, stale_exact);
  if (exact > i_outer) {
    CHECK(stale > i_outer && stale <= exact && stale_exact == stale);
    CHECK(memcmp(again, pcs, (size_t)stale * sizeof *pcs) == 0);
  } else {
    /* Frames this build's CFI walk cannot unwind (frame pointers under a
     * sanitizer: the syscall line gives no RBP) have no links to check. */
    printf("outer not unwound here: the untouched chain is not checked\n");
    CHECK(stale == 0 || (stale <= exact && memcmp(again, pcs, (size_t)stale * sizeof *pcs) == 0));
  }
  finish(&went_on);

  /* Woken, it called on from where it waited: that call's return address
   * lies where the wait's was and leads elsewhere, so nothing of that
   * stack is the wait's. */
  static waiter_run called_on = {.call_on = true};
  tid = start_waiting(&called_on, line, sizeof line);
  wake(&called_on);
  CHECK_EQ(tm_stack_scan(tid, line, pcs, 16, NULL), 0);
  finish(&called_on);
  printf("ok\n");
  return 0;
}
