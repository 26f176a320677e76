/* A Go program's threads named from its runtime (goruntime.h) in the
 * external sampler: each thread an M of runtime.allm is called "M<id>",
 * with its role when it has one ("M1 sysmon", "M5 template"), the names
 * the runtime's own traces use; its stat only says the program's name.
 * Threads that are no M (cgo's, a C library's) keep their own. */
#ifndef THREADMON_ATTACH_XGONAMES_H
#define THREADMON_ATTACH_XGONAMES_H

#include <stdint.h>

#include "goruntime.h"
#include "xwaits.h"

typedef struct tm_xgo {
  tm_go_reader reader;
  tm_go_runtime ms; /* the last walk */
  uint64_t walked_ns;
  tm_xwaits *x;     /* its maps and symbols */
} tm_xgo;

/* Looks for the runtime among x's modules (once: its DWARF is read) and
 * hooks the names into x's sampler. A Go program whose Ms cannot be read
 * gets a notice saying why. */
void tm_xgo_open(tm_xgo *g, tm_xwaits *x);
/* Reads the Ms again when due (every 100 ms: about 3 us an M) and renames
 * the live threads whose M it knows. */
void tm_xgo_tick(tm_xgo *g, uint64_t now);
void tm_xgo_free(tm_xgo *g);
/* The process exec'd (its maps read again): looks for a runtime in the new
 * image; the old one's Ms name nothing now. */
void tm_xgo_image_changed(tm_xgo *g);

#endif
