/* Where Go's runtime keeps what names its threads, read from the
 * program's DWARF: the offsets of runtime.m's and runtime.g's fields.
 *
 * They move between Go versions (runtime2.go says of m.procid: "for
 * debuggers, but offset not hard-coded"), so none is assumed. Go's linker
 * writes the types into the "runtime" units; a binary built with
 * -ldflags=-w (or -s) has none, and its Ms stay unnamed. */
#ifndef THREADMON_ATTACH_GOLAYOUT_H
#define THREADMON_ATTACH_GOLAYOUT_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct tm_go_layout {
  size_t m_size;         /* bytes of a runtime.m (0: not said); every field lies inside */
  long m_procid, m_id;   /* its thread's tid (uint64), its M id (int64) */
  long m_alllink;        /* next M on runtime.allm */
  long m_curg;           /* *g running on it; -1: not in this Go */
  long m_lockedg;        /* guintptr of the G locked to it (LockOSThread); -1 */
  long m_mstartfn;       /* func() it was started with (sysmon ...); -1 */
  long g_goid;           /* runtime.g's goid; -1 */
} tm_go_layout;

/* Reads the layout from elf's DWARF; false with *why set when it has none
 * or it lacks a field the walk needs (procid, id, alllink). */
bool tm_go_layout_read(Elf *elf, tm_go_layout *l, const char **why);

#endif
