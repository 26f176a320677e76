/* Hidden (internal) locks: futex words the sampler sees threads blocked on
 * outside every wrapped call (glibc's random() lock behind rand(), stdio
 * FILE locks, malloc arenas), made KIND_INTERNAL objects with call sites.
 *
 * A word is an internal lock only when it lies in no interposed object
 * (a pthread mutex's word is the mutex, a cond's is cond + 40, a rwlock
 * writer's rwlock + 8, a futex word a program waited on through syscall()
 * is KIND_FUTEX: any word inside a known object is refused).
 *
 * Call sites: the blocked thread's stack is read without stopping or
 * signalling it, by scanning a copy of it (stackscan.h), at most every
 * TM_HIDDEN_SCAN_NS per thread, first thing at a sighting (the thread may
 * wake at any moment after its syscall file was read). Each tick a thread is seen waiting counts
 * one sample for the stack last read of it on that word (TM_SITE_UNKNOWN
 * before any): a site's contentions are samples, its wait_ns samples x
 * tick interval. Sampler thread only. */
#ifndef THREADMON_HIDDEN_H
#define THREADMON_HIDDEN_H

#include <stdbool.h>
#include <stdint.h>

#define TM_HIDDEN_SCAN_NS 100000000u /* one stack read per waiting thread per 100 ms */

/* The futex words judged and the threads seen waiting, a part of the
 * sampler's state (tm_sampler.hidden): allocated at the first futex wait
 * seen (calloc: a program that never waits on one touches no page of
 * them), freed by tm_hidden_free. Zero is the initial state. */
typedef struct tm_hidden {
  struct word_verdict *words;
  struct hidden_thread *threads;
} tm_hidden;

/* Thread tid was seen blocked in futex() on word, outside wrapped calls.
 * syscall_line: its syscall file as just read, or NULL when it has not run
 * since the last read (same call). tick_ns: the sampling interval. Returns
 * true when the wait counted for an internal lock. */
bool tm_hidden_seen(tm_hidden *h, uint32_t tid, uint64_t word, const char *syscall_line,
                    uint64_t now_ns, uint64_t tick_ns);
/* Frees the tables and zeroes h. */
void tm_hidden_free(tm_hidden *h);

#endif
