/* Another process's unwind tables, for probe/base/cfi.c's unwinder: per module,
 * a copy of the segment that holds its .eh_frame_hdr and .eh_frame, read
 * once from the target with process_vm_readv (what it runs, even if the
 * file on disk changed), located by the module file's program headers. */
#ifndef THREADMON_ATTACH_RCFI_H
#define THREADMON_ATTACH_RCFI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfi.h"
#include "maps.h"

typedef struct tm_rcfi tm_rcfi;

tm_rcfi *tm_rcfi_new(const tm_maps *m); /* m must outlive it */
void tm_rcfi_free(tm_rcfi *c);

/* A tm_cfi_find: arg is a tm_rcfi. */
bool tm_rcfi_find(void *arg, uintptr_t ip, tm_cfi_tables *out);

#endif
