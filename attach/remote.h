/* Reading another process without stopping it: its memory through
 * process_vm_readv and its /proc files.
 *
 * Both need ptrace access to the target (same user, dumpable, Yama;
 * access.h explains a refusal). A page that is not mapped ends a read
 * early instead of failing it: a stack read stops at the stack's top. */
#ifndef THREADMON_ATTACH_REMOTE_H
#define THREADMON_ATTACH_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copies up to len bytes at addr in pid into buf, page by page; returns
 * the bytes read before the first unreadable page, -1 when none. */
ssize_t tm_remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len);

/* Reads the whole of a (small) /proc file into buf, NUL-terminated;
 * returns its length, -1 with errno set when it cannot be read. */
ssize_t tm_read_file(const char *path, char *buf, size_t n);

/* Field n (1-based, n > 2) of a /proc stat line, after the name (which
 * may hold spaces and parentheses); -1 when the line has no such field. */
long long tm_stat_field(const char *stat, int n);

#endif
