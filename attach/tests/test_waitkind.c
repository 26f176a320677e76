/* tm_wait_classify_names: the kind of a futex wait from its frames' names,
 * as the stacks of real programs give them (mangled where they are). */
#include <stdio.h>
#include <string.h>

#include "waitkind.h"

static int failures;

static void expect(const char *what, const char *const *names, int n, tm_wait_kind kind,
                   int frame) {
  const tm_wait_class c = tm_wait_classify_names(names, n);
  if (c.kind != kind || c.frame != frame) {
    fprintf(stderr, "FAIL %s: kind %s frame %d, expected %s frame %d\n", what,
            tm_wait_kind_name(c.kind), c.frame, tm_wait_kind_name(kind), frame);
    failures++;
  }
}

int main(void) {
  /* Rust 1.63's mpsc receive: parked, a stale Mutex::lock_contended return
   * address beyond it, then the channel. */
  const char *recv[] = {"syscall",
                        "_ZN3std3sys4unix5futex10futex_wait17h0123456789abcdefE",
                        "_ZN3std6thread4park17h0123456789abcdefE",
                        "_ZN3std3sys4unix5locks11futex_mutex5Mutex14lock_contended17h01E",
                        "_ZN3std4sync4mpmc7context7Context10wait_until17h01E",
                        "_ZN3std4sync4mpmc4list16Channel$LT$T$GT$4recv17h01E",
                        "_ZN7channel8consumer17h01E"};
  expect("mpsc recv", recv, 7, TM_WAIT_RUST_CHANNEL, 2);
  /* A contended std Mutex: no park on the stack. */
  const char *lock[] = {"syscall", "_ZN3std3sys4unix5futex10futex_wait17h01E",
                        "_ZN3std3sys4unix5locks11futex_mutex5Mutex14lock_contended17h01E",
                        "_ZN5locks6worker17h01E"};
  expect("std Mutex", lock, 4, TM_WAIT_RUST_MUTEX, 2);
  /* Parked with no channel (a plain Thread::park): not a channel. */
  const char *parked[] = {"syscall", "_ZN3std6thread4park17h01E", "_ZN4pool4idle17h01E"};
  expect("plain park", parked, 3, TM_WAIT_UNKNOWN, -1);
  /* glibc, with a frame missing its name. */
  const char *mutex[] = {"__futex_abstimed_wait_common", NULL, "___pthread_mutex_lock", "main"};
  expect("pthread mutex", mutex, 4, TM_WAIT_MUTEX, 2);
  if (strcmp(tm_wait_kind_name(TM_WAIT_RUST_CHANNEL), "rust-channel") != 0) {
    fprintf(stderr, "FAIL the channel kind's name\n");
    failures++;
  }
  if (!failures) puts("waitkind: 5 checks passed");
  return failures != 0;
}
