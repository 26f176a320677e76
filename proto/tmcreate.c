#include "tmcreate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 64 random bits; a name that exists (planted, or a coincidence) is never
 * opened, another is drawn. */
static uint64_t random_bits(void) {
  uint64_t r;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
}

int tm_create_temp(const char *path, const char *tag, char *tmp, size_t n) {
  for (int attempt = 0; attempt < 16; attempt++) {
    int w = snprintf(tmp, n, "%s%s.%016llx", path, tag, (unsigned long long)random_bits());
    if (w < 0 || (size_t)w >= n) {
      errno = ENAMETOOLONG;
      return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

int tm_rename_onto(const char *tmp, const char *path) {
  /* Only a file or a link is replaced: renaming onto /dev/null (a root
   * user's THREADMON_OUTPUT=/dev/null) would put a file where the device was
   * for every program on the machine. A directory is refused by rename. */
  struct stat st;
  if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode) &&
      !S_ISDIR(st.st_mode)) {
    errno = EEXIST;
    return -1;
  }
  return rename(tmp, path);
}

int tm_create_replacing(const char *path) {
  char tmp[4200];
  int fd = tm_create_temp(path, ".new", tmp, sizeof tmp);
  if (fd < 0) return -1;
  if (tm_rename_onto(tmp, path) != 0) {
    int e = errno;
    close(fd);
    unlink(tmp);
    errno = e;
    return -1;
  }
  return fd;
}
