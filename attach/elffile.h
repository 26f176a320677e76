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

#include "notes.h"

typedef struct tm_elf_file {
  int fd;
  Elf *elf;
} tm_elf_file;

/* An ELF file's handle; false when it cannot be read as one (a file that
 * is not regular, nor a device, is said in notes). */
bool tm_elf_open(const char *path, tm_elf_file *f, tm_notes *notes);
void tm_elf_close(tm_elf_file *f);

#endif
