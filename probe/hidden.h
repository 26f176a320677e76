/* Hidden (internal) locks: futex words the sampler sees threads blocked on
 * outside every wrapped call (glibc's random() lock behind rand(), stdio
 * FILE locks, malloc arenas), made KIND_INTERNAL objects with call sites.
 *
 * A word is an internal lock only when it lies in no interposed object
 * (a pthread mutex's word is the mutex, a cond's is cond + 40, a rwlock
 * writer's rwlock + 8: any word inside a known object is refused).
 *
 * Call sites: first read without touching the thread, by scanning a copy
 * of its stack (stackscan.h), at most every TM_HIDDEN_CAPTURE_NS. When
 * that fails (it woke meanwhile) the blocked thread is asked for its own
 * stack with a signal (TM_HIDDEN_SIGNAL; a real-time signal). Only when
 *   - the program left that signal at SIG_DFL (checked before every send;
 *     once the program installs its own handler it is never sent again),
 *   - the thread does not block it (status SigBlk),
 *   - its syscall file, read again just before the send, says futex
 *     FUTEX_WAIT or FUTEX_WAIT_BITSET on that word with no timeout (a timed
 *     wait would return EINTR: sem_timedwait; nanosleep/usleep are never
 *     futex), and
 *   - it was not asked in the last TM_HIDDEN_CAPTURE_NS.
 * The handler (SA_RESTART) checks that it interrupted exactly that futex
 * call (RAX = SYS_futex about to be restarted, RDI = the word), unwinds into
 * a fixed slot and returns; the kernel restarts the wait. A wait the thread
 * left between the check and the signal is interrupted harmlessly except for
 * a sleep it entered in those few microseconds (it would end early).
 *
 * Each tick a thread is seen waiting counts one sample for the stack it
 * last reported on that word (samples seen before its first report wait
 * for it, one tick); without any report they count for TM_SITE_UNKNOWN. A
 * site's contentions are samples, its wait_ns samples x tick interval.
 * Sampler thread only. */
#ifndef THREADMON_HIDDEN_H
#define THREADMON_HIDDEN_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>

#define TM_HIDDEN_SIGNAL (SIGRTMAX - 6)
#define TM_HIDDEN_CAPTURE_NS 100000000u /* one stack per thread per 100 ms */

/* Thread tid was seen blocked in futex() on word, outside wrapped calls.
 * syscall_line: its syscall file as just read, or NULL when it has not run
 * since the last read (same call). tick_ns: the sampling interval. Returns
 * true when the wait counted for an internal lock. */
bool tm_hidden_seen(uint32_t tid, uint64_t word, const char *syscall_line, uint64_t now_ns,
                    uint64_t tick_ns);
/* Once per tick after the thread walk: stacks the signalled threads wrote. */
void tm_hidden_collect(uint64_t now_ns);
/* Fork child: forgets threads and requests (the handler stays installed). */
void tm_hidden_forget(void);
/* Signals sent, and stacks read by scanning (stackscan.h), for tests. */
uint64_t tm_hidden_signals_sent(void);
uint64_t tm_hidden_scans_done(void);

/* "futex wait on word with no timeout" per a syscall file line. */
bool tm_hidden_untimed_wait(const char *syscall_line, uint64_t word);

#endif
