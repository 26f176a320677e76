/* Opening one of the target's ELF files safely.
 *
 * The path is the target's to choose: it may name a FIFO or a device
 * (open would block, or read forever), and the file may be truncated while
 * it is read (a mapping of it would fault with SIGBUS). So it is opened
 * non-blocking, must be a regular file, and libelf reads it with pread
 * (ELF_C_READ), never through a mapping. */
#ifndef THREADMON_ATTACH_ELFFILE_H
#define THREADMON_ATTACH_ELFFILE_H

#include <gelf.h>
#include <stdbool.h>
#include <sys/types.h>

#include "notes.h"

typedef struct tm_elf_file {
  int fd;
  Elf *elf;
} tm_elf_file;

/* An ELF file's handle; false when it cannot be read as one (a file that
 * is not regular, nor a device, is said in notes). */
bool tm_elf_open(const char *path, tm_elf_file *f, tm_notes *notes);
/* The same from an open descriptor (taken: closed on failure and by
 * tm_elf_close); path only names it in notes. With want_dev/want_ino set
 * (not both 0), the file must be that inode, else it is skipped with a
 * note: a target's file replaced after it was mapped, or a name it
 * points elsewhere. */
bool tm_elf_open_fd(int fd, const char *path, dev_t want_dev, ino_t want_ino, tm_elf_file *f,
                    tm_notes *notes);
void tm_elf_close(tm_elf_file *f);

#endif
