/* Session settings from the environment (THREADMON_*). Parsed once, at
 * start-up, by session.c; nothing here allocates. */
#ifndef THREADMON_CONFIG_H
#define THREADMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TM_PATH_BYTES 4096
/* THREADMON_CONNECT=unix:/path: the display's Unix socket; sun_path's size. */
#define TM_UNIX_PREFIX "unix:"
#define TM_UNIX_PATH_BYTES 108

typedef struct tm_config {
  char output[TM_PATH_BYTES]; /* THREADMON_OUTPUT, "" = no capture file */
  char host[256];             /* THREADMON_CONNECT host part, "" = none; "unix:/path" whole */
  char port[16];              /* "" for a Unix socket */
  char token[256];            /* THREADMON_TOKEN */
  char status[TM_PATH_BYTES]; /* THREADMON_STATUS: the launcher's status file, "" = none */
  char tree[TM_PATH_BYTES];   /* THREADMON_TREE: the tree's directory (lives, captures), "" = none */
  uint64_t interval_ns;       /* the tick now: interval_asked_ns, or longer over the budget */
  uint64_t interval_asked_ns; /* THREADMON_INTERVAL_MS, default 10 ms */
  size_t net_buffer_bytes;    /* THREADMON_NET_BUFFER_KB, default 8 MiB */
  bool follow;                /* THREADMON_FOLLOW, default 1 */
  bool perf;                  /* THREADMON_PERF, default 1: perf events at all */
  bool counters;              /* THREADMON_COUNTERS, default 0: per-thread perf counters */
  uint64_t max_switch_rate;   /* THREADMON_MAX_SWITCH_RATE, per second and CPU, 0 = no limit */
  uint64_t max_create_rate;   /* THREADMON_MAX_CREATE_RATE, threads a second x CPUs, 0 = none */
  double budget;              /* THREADMON_BUDGET, share of one core for the probe's thread, 0 = none */
  int compress;               /* THREADMON_COMPRESS, zstd level of capture blocks, default 3, 0 = plain */
} tm_config;

/* Fills c from the environment. Returns 0, or -1 after printing one
 * "threadmon: ..." line when a value is unusable. */
int tm_config_load(tm_config *c);

/* True when the session has somewhere to send data. */
bool tm_config_wants_probe(const tm_config *c);

/* "dir/out.tmcap" -> "dir/out.<pid>.tmcap" (pid appended when there is no
 * extension). Returns -1 when it does not fit. */
int tm_config_child_path(const char *path, pid_t pid, char *out, size_t n);
/* The same with any tag: "out.tmcap" + "12-exec1" -> "out.12-exec1.tmcap". */
int tm_config_tag_path(const char *path, const char *tag, char *out, size_t n);

/* Removes every LD_PRELOAD entry naming libthreadmon from the environment,
 * so that children and exec'd images run unprobed (THREADMON_FOLLOW=0). */
void tm_config_unpreload(void);
/* Whether this image starts lazy (a descendant in a process tree that has
 * no session of its own yet: THREADMON_TREE set, following, and the
 * lineage in THREADMON_SESSION another process's), from the environment
 * alone, answered once per image (its constructors ask it, before the
 * program runs): they leave their work (symbol resolution) to first use. */
bool tm_config_lazy_image(void);
/* THREADMON_SESSION's "PID:GENERATION" (what the probe wrote there), read
 * without sscanf: every exec of a tree reads it, and sscanf's first call
 * costs an image about six page faults of libc's scanf and locale tables. */
bool tm_config_lineage(const char *s, unsigned *pid, unsigned *gen);

#endif
