/* The readable form of a frame that threadmon-attach-peek prints
 * ("libfoo.so!_ZN3foo3barEv+0x12" -> "libfoo.so!foo::bar()+0x12"). */
#ifndef THREADMON_ATTACH_READABLENAME_H
#define THREADMON_ATTACH_READABLENAME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Demangles the symbol between the frame's '!' and its "+0x" in place (C++
 * and Rust names, as the display shows them). A name that does not
 * demangle, or whose readable form would not fit in n bytes, stays. */
void tm_readable_frame(char *frame, size_t n);

#ifdef __cplusplus
}
#endif

#endif
