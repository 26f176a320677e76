/* Shared by the session and transport tests: run a workload under the
 * probe and decode what it wrote. */
#ifndef TEST_SESSION_UTIL_H
#define TEST_SESSION_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "threadmon.pb-c.h"

typedef struct capture {
  Threadmon__Frame **frames;
  size_t n;
  int damaged;        /* the decoder reported an error (not a cut tail) */
  size_t tail_bytes;  /* bytes after the last whole frame */
  char error[200];
} capture;

/* Decodes a capture file (or any stream bytes). Returns -1 when the file
 * cannot be read. Every returned frame passed the CRC and unpacked. */
int capture_load(const char *path, capture *c);
int capture_decode(const uint8_t *data, size_t len, capture *c);
void capture_free(capture *c);

/* Frames of one kind. */
size_t capture_count(const capture *c, Threadmon__Frame__BodyCase kind);
const Threadmon__Frame *capture_first(const capture *c, Threadmon__Frame__BodyCase kind);
const Threadmon__Frame *capture_last(const capture *c, Threadmon__Frame__BodyCase kind);

/* Starts argv[0] (a path) with env entries added ("NAME=value", NULL
 * terminated) and LD_PRELOAD set to the probe. Returns the pid. */
pid_t run_probed(const char *probe, char *const argv[], char *const extra_env[]);
/* Waits at most timeout_ms; returns the wait status, or -1 on timeout
 * (the child is then killed). */
int wait_for(pid_t pid, int timeout_ms);

uint64_t now_ms(void);
/* The clock id's time in ns (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID...). */
uint64_t clock_ns(clockid_t id);
/* Sleeps ms milliseconds (once: a signal may cut it short). */
void nap_ms(long ms);

#endif
