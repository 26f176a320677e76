/* Target-chosen ELF files, opened safely (elffile.h). */
#include "elffile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

bool tm_elf_open(const char *path, tm_elf_file *f, tm_notes *notes) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    f->elf = NULL;
    f->fd = -1;
    return false;
  }
  return tm_elf_open_fd(fd, path, 0, 0, f, notes);
}

bool tm_elf_open_fd(int fd, const char *path, dev_t want_dev, ino_t want_ino, tm_elf_file *f,
                    tm_notes *notes) {
  f->elf = NULL;
  f->fd = fd;
  struct stat st;
  if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    /* Devices are mapped for good reasons (/dev/zero shared memory, a
     * GPU's); a FIFO, socket or directory under a mapped file's name was
     * put there. */
    if (!S_ISCHR(st.st_mode)) tm_note(notes, "skipped %s: not a regular file", path);
    close(f->fd);
    f->fd = -1;
    return false;
  }
  if ((want_dev || want_ino) && (st.st_dev != want_dev || st.st_ino != want_ino)) {
    tm_note(notes, "skipped %s: not the file that is mapped (replaced since, or a link)", path);
    close(f->fd);
    f->fd = -1;
    return false;
  }
  elf_version(EV_CURRENT);
  f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
  if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) { /* data files are mapped too */
    tm_elf_close(f);
    return false;
  }
  return true;
}

void tm_elf_close(tm_elf_file *f) {
  if (f->elf) elf_end(f->elf);
  if (f->fd >= 0) close(f->fd);
  f->elf = NULL;
  f->fd = -1;
}
