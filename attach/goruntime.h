/* A Go program's threads named from its runtime, read from outside.
 *
 * Every thread of a Go program is an M of its runtime, all of them on the
 * list runtime.allm: each M's procid is its thread's tid, its id the M
 * number the runtime's own traces use (m0, the main thread, is 0), curg
 * the goroutine running on it, lockedg the one locked to it
 * (LockOSThread), and mstartfn the function a special M was started for:
 * runtime.sysmon (the monitor that preempts and polls), runtime.
 * templateThread (which starts Ms for locked threads). The list's address comes from the
 * module's symbol table (elfsyms.h), the fields' offsets from its DWARF
 * (golayout.h), the Ms themselves with process_vm_readv: nothing is
 * stopped, and a list that changes while it is read costs at most a name. */
#ifndef THREADMON_ATTACH_GORUNTIME_H
#define THREADMON_ATTACH_GORUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elfsyms.h"
#include "golayout.h"
#include "maps.h"

/* Ms read at most (the runtime's own default limit is 10,000 threads). */
#define TM_GO_MS_MAX 20000

typedef struct tm_go_m {
  pid_t tid;             /* 0: its thread has not started yet */
  int64_t id;            /* M id: 0 is m0, the main thread */
  uint64_t goid;         /* the G running on it, 0: none (idle, or in the scheduler) */
  uint64_t locked_goid;  /* the G locked to it, 0: none */
  char start[64];        /* its mstartfn's function, "" when none */
} tm_go_m;

typedef struct tm_go_runtime {
  bool found;      /* the target has a Go runtime (a module with .go.buildinfo) */
  bool read;       /* and its Ms were read */
  char why[320];   /* found, not read: why, one line */
  tm_go_m *ms;
  size_t nms;
} tm_go_runtime;

/* Where a target's runtime keeps its Ms: found once (reading its DWARF and
 * symbol table is the costly part), then walked as often as wanted, cheaply
 * (docs/benchmarks.md, "Behind the comments"). */
typedef struct tm_go_reader {
  bool found;     /* as in tm_go_runtime */
  bool ready;     /* allm and layout known: tm_go_runtime_walk can read */
  char why[320];  /* found, not ready: why */
  uintptr_t allm; /* address of runtime.allm */
  tm_go_layout layout;
} tm_go_reader;

/* Finds the Go runtime among maps' modules (found false when there is
 * none: not an error). syms must be of maps. */
void tm_go_reader_open(const tm_maps *maps, tm_symtabs *syms, tm_go_reader *r);
/* Reads pid's Ms now (out->found, read and why as r says). syms names
 * the functions the Ms were started with. */
void tm_go_runtime_walk(pid_t pid, const tm_go_reader *r, tm_symtabs *syms, tm_go_runtime *out);
/* Both at once, for one look. */
void tm_go_runtime_read(pid_t pid, const tm_maps *maps, tm_symtabs *syms, tm_go_runtime *out);
void tm_go_runtime_free(tm_go_runtime *g);

/* The M whose thread is tid, NULL when none. */
const tm_go_m *tm_go_m_of(const tm_go_runtime *g, pid_t tid);
/* "sysmon", "template thread" for the special Ms, else NULL. */
const char *tm_go_m_role(const tm_go_m *m);

#endif
