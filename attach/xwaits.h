/* The external sampler's view of futex waits (docs/attach.md): what the
 * probe's wrappers would have said, made from outside. Each futex word a
 * thread of the target sleeps on becomes a sync object, its kind from the
 * thread's stack (waitkind.h: pthread_mutex_lock, sem_wait, a Rust Mutex
 * ...), named by the target's symbols, its first waiter's frames its call
 * site. A wait of a kind that has a thread state (mutex, cond, rwlock,
 * semaphore, barrier, join) becomes a pair of transitions: blocked on the
 * object (with the owner the word names, for a glibc mutex or a rwlock
 * held for writing) from the thread's last voluntary switch-out, running
 * again from its first switch-in after it (the switch records, exact), or
 * from the reads that saw it begin and end (without them). A wait that
 * begins and ends between two reads is not seen: its thread sleeps then
 * (replaying every sleep between two reads that saw the same word as
 * waits on it read a waiter's nanosleeps as mutex waits). Other waits
 * (glibc-internal locks, atomics, Go's runtime) are INTERNAL objects, the
 * thread sleeping. Every tick a thread is seen waiting counts one sample
 * for its object. Acquisitions and hold times stay unknown (0, and the
 * Hello's sources say so).
 *
 * These are the probe's stage hooks (tm_outside, sampler_state.h) and its
 * switch source; single-threaded, like the sampler. */
#ifndef THREADMON_ATTACH_XWAITS_H
#define THREADMON_ATTACH_XWAITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "elfsyms.h"
#include "maps.h"
#include "rcfi.h"
#include "sampler_state.h"

struct tm_session;
typedef struct xwait xwait;
typedef struct xword xword;

typedef struct tm_xwaits {
  pid_t pid;
  bool stacks; /* ptrace access: stacks and futex words can be read */
  tm_maps maps;
  tm_symtabs *syms;
  tm_rcfi *cfi;
  bool maps_ok;
  uint64_t maps_loaded_ns;
  xwait *waits; /* by tid, open addressing */
  uint32_t waits_cap, waits_used;
  xword *words; /* by futex word: its object and kind, once classified */
  uint32_t words_cap, words_used;
  struct tm_session *s;
  tm_outside hooks;
  /* The switch source's consumer, while a drain runs. */
  void (*fwd)(void *arg, uint32_t tid, uint64_t time_ns, uint32_t cpu, int kind);
  void *fwd_arg;
} tm_xwaits;

/* Sets up x for pid and hooks it into s's sampler (outside, switch source
 * when s has switch records). stacks: whether the target's memory and
 * syscall files may be read. False when out of memory. */
bool tm_xwaits_init(tm_xwaits *x, struct tm_session *s, pid_t pid, bool stacks);
/* The session ends at now: the waits still going on count up to now in
 * their objects' wait times (their threads stay blocked). */
void tm_xwaits_close(tm_xwaits *x, uint64_t now);
/* The process exec'd: its modules are the new image's (read again now,
 * not when a stack first falls outside the old ones). */
void tm_xwaits_image_changed(tm_xwaits *x);
void tm_xwaits_free(tm_xwaits *x);

#endif
