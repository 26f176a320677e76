/* Is an address inside a loaded module's segment with given permissions?
 * For code that must not read memory that may be unmapped, and for telling
 * code pointers from data. dl_iterate_phdr per call: for the sampler's
 * occasional checks, not per event. */
#ifndef THREADMON_SEGMENTS_H
#define THREADMON_SEGMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* [a, a + len) lies in one PT_LOAD segment having every PF_* bit of flags. */
bool tm_in_segment(uintptr_t a, size_t len, unsigned flags);

#endif
