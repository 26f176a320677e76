/* The process tree's index (THREADMON_TREE=DIR, docs/format.md, "Process
 * trees"): one line per event of a process's life appended to DIR/lives,
 * by every process of the tree. A child that never starts a session of its
 * own (it made no thread) is only these lines: no file, no probe thread, no
 * perf events.
 *
 * Async-signal-safe: _exit may run in a signal handler, and a fork child
 * writes its line before the program runs on. The file is opened, appended
 * to with one write(2) and closed each time: lines of several processes
 * never interleave, no descriptor is kept in the program, and a file the
 * launcher did not create (or removed) is never made. */
#ifndef THREADMON_LIVES_H
#define THREADMON_LIVES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

typedef struct tm_life {
  const char *kind; /* "start", "fork" or "end" */
  uint32_t pid, ppid;
  uint64_t t_ns;       /* CLOCK_MONOTONIC */
  uint64_t since_ns;   /* end: when this image began (0 = not known) */
  const char *how;     /* end: "exit", "_exit" or "exec" (NULL: none) */
  int status;          /* end: the exit status */
  const char *capture; /* start: the capture file's name in DIR (NULL: none) */
  /* end: the CPU times to write; NULL: this process's own (getrusage),
   * unless cpu_unknown (a child's end written by its parent from waitid). */
  const struct rusage *usage;
  bool cpu_unknown;
  const char *name;    /* the program's name, last on the line (NULL: none) */
} tm_life;

/* Appends l's line to DIR/lives; does nothing when dir is "". An end line
 * carries the process's user and system CPU time so far (getrusage), or
 * the usage given (a child's, from wait4). */
void tm_lives_write(const char *dir, const tm_life *l);

#endif
