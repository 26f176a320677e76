/* Creating output files so that no other user can redirect them: nothing
 * is ever opened through a name that may already exist. A new file is made
 * under a fresh random name in the target's directory (O_CREAT | O_EXCL |
 * O_NOFOLLOW, mode 0644 less the umask) and renamed onto the target, which
 * replaces the file or symlink that had that name (a planted symlink is
 * replaced, never followed; a file of another user is never written into).
 * A device, FIFO or socket at the name (/dev/null) is never replaced.
 *
 * Used by the probe (captures, written as they grow: renamed at once), the
 * flight recorder (written whole, then renamed) and the display. */
#ifndef THREADMON_TMCREATE_H
#define THREADMON_TMCREATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a new empty file beside path, named path + tag + "." + random
 * hex, and writes that name to tmp (n bytes). Returns a write-only
 * close-on-exec descriptor, or -1 with errno set. */
int tm_create_temp(const char *path, const char *tag, char *tmp, size_t n);

/* Renames tmp onto path unless path names something other than a regular
 * file or a symlink: then -1 with EEXIST, tmp left for the caller. */
int tm_rename_onto(const char *tmp, const char *path);

/* A new empty file at path at once: tm_create_temp, then renamed onto path.
 * Returns its descriptor, or -1 with errno set (nothing left behind). */
int tm_create_replacing(const char *path);

#ifdef __cplusplus
}
#endif

#endif
