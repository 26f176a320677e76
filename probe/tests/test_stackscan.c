/* Stack scanning of a blocked thread (stackscan.h): a thread waits in a
 * raw futex call three known functions deep; the scan of its stack, made
 * from another thread without stopping it, must hold the blocking PC and
 * return addresses inside each of those functions in call order, and a
 * scan with a stale syscall line (the thread left the call) must give
 * nothing. Also the call-instruction test on hand-made code bytes. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "stackscan.h"
#include "tm_check.h"

static _Atomic uint32_t word;
static _Atomic uint32_t tid_of_waiter;

/* noinline and a call after the call: each frame keeps its return address. */
__attribute__((noinline)) static void inner(void) {
  while (atomic_load(&word) == 0) syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void middle(void) {
  inner();
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void outer(void) {
  middle();
  __asm__ volatile("" ::: "memory");
}

static void *waiter(void *arg) {
  (void)arg;
  atomic_store(&tid_of_waiter, (uint32_t)syscall(SYS_gettid));
  outer();
  return NULL;
}

static int read_line(uint32_t tid, char *buf, size_t n) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%u/syscall", tid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t r = fread(buf, 1, n - 1, f);
  fclose(f);
  buf[r] = 0;
  return 0;
}

/* Index of the first frame inside fn (fn .. fn + 256 bytes), or -1. */
static int frame_in(void **pcs, int n, void (*fn)(void)) {
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

  pthread_t th;
  CHECK(pthread_create(&th, NULL, waiter, NULL) == 0);
  uint32_t tid;
  while (!(tid = atomic_load(&tid_of_waiter))) sched_yield();
  char line[256] = "";
  for (int tries = 0; tries < 2000; tries++) {
    if (read_line(tid, line, sizeof line) == 0 && strncmp(line, "202 ", 4) == 0) break;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  CHECK(strncmp(line, "202 ", 4) == 0);

  void *pcs[16];
  int n = tm_stack_scan(tid, line, pcs, 16, NULL);
  int i_inner = frame_in(pcs, n, inner), i_middle = frame_in(pcs, n, middle),
      i_outer = frame_in(pcs, n, outer);
  printf("%d frames; inner at %d, middle at %d, outer at %d\n", n, i_inner, i_middle, i_outer);
  CHECK(n >= 4);
  CHECK(i_inner >= 1 && i_middle > i_inner && i_outer > i_middle);
  /* Again, the rows from this thread's cache now (cfi.h): the same frames. */
  void *again[16];
  CHECK_EQ(tm_stack_scan(tid, line, again, 16, NULL), n);
  CHECK(memcmp(again, pcs, (size_t)n * sizeof *pcs) == 0);

  /* Wake it: the line it was read with is stale now. */
  atomic_store(&word, 1);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK_EQ(tm_stack_scan(tid, line, pcs, 16, NULL), 0);
  printf("ok\n");
  return 0;
}
