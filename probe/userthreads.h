/* User threads (M:N): contexts made with makecontext and switched to with
 * swapcontext/setcontext on the program's LWPs (docs/format.md, "User
 * threads"). The core that wrap_context.c forwards to; unit tests drive it
 * directly.
 *
 * A user thread is a makecontext: its id is handed out then (1, 2, 3...),
 * with the function, the stack range and the ucontext_t's address. Which
 * user thread a switch goes to is found by the target ucontext_t's address
 * (a table filled by makecontext and by every context saved through
 * swapcontext/getcontext: whatever ran when it was saved), and, for a
 * context the table does not know (a copy), by its stack pointer inside a
 * made stack. Neither: the LWP's own context, id 0. Each LWP knows which
 * user thread it runs in a thread-local word (tm_ut_cur). All of it without
 * locks, allocation or syscalls after the tables are mapped (the first
 * makecontext maps them). */
#ifndef THREADMON_USERTHREADS_H
#define THREADMON_USERTHREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "probe.h"

#define TM_UT_MAX 65536u        /* user threads (makecontext calls) per session */
#define TM_UT_MAP_SLOTS 131072u /* ucontext_t address -> id, power of two */

typedef struct tm_uthread {
  uintptr_t ucp;                /* the ucontext_t it was made in */
  uintptr_t stack_lo, stack_hi; /* uc_stack at makecontext */
  void *fn;                     /* given to makecontext */
  uintptr_t link;               /* uc_link at makecontext (where it goes when done) */
  uint64_t made_ns;
  uint32_t creator_tid;
  _Atomic uint32_t ready; /* 1 once the fields above are written */
} tm_uthread;

/* The user thread this LWP runs now; 0 = its own context. */
extern TM_TLS __thread uint32_t tm_ut_cur TM_HIDDEN;

/* Maps the tables (idempotent); false when mmap failed. Keeps errno. */
TM_HIDDEN bool tm_ut_map(void);
/* A makecontext: a new id (0 when the table is full or unmapped). *retired:
 * the made user thread ucp held before (its context is overwritten), else 0. */
TM_HIDDEN uint32_t tm_ut_make(const void *ucp, void *fn, uintptr_t stack_lo, uintptr_t stack_hi,
                              uintptr_t link, uint32_t creator_tid, uint64_t now,
                              uint32_t *retired);
/* The user thread a switch to the context at ucp (stack pointer sp, 0 =
 * unknown) resumes: the table's entry when its stack holds sp, else the
 * made stack that holds sp, else 0. */
TM_HIDDEN uint32_t tm_ut_lookup(const void *ucp, uintptr_t sp);
/* The context at ucp was saved while user thread id ran (id 0: an LWP's own). */
TM_HIDDEN void tm_ut_note(const void *ucp, uint32_t id);
/* The record of id, NULL when unknown or still being written. */
TM_HIDDEN const tm_uthread *tm_ut_get(uint32_t id);
TM_HIDDEN uint32_t tm_ut_last_id(void);
/* makecontext calls not tracked (table full). */
TM_HIDDEN uint64_t tm_ut_untracked(void);


/* ---- sampler side, userthreads_wire.c (needs the session) ---- */
struct tm_session;
/* A user-thread event drained from tid's ring (state >= TM_EV_USER_SWITCH). */
TM_HIDDEN void tm_ut_wire_event(struct tm_session *s, uint32_t tid, const tm_event *e);
/* Each tick, after the rings were drained: UserThread frames for the user
 * threads made since the last tick, then the batch of switches. */
TM_HIDDEN void tm_ut_wire_tick(struct tm_session *s);
/* Every UserThread sent so far again (a new connection, a capture gap). */
TM_HIDDEN void tm_ut_wire_resend(struct tm_session *s, int to);
/* Fork child: nothing was sent in this session. */
TM_HIDDEN void tm_ut_wire_forget(void);

#endif
