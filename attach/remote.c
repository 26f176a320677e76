/* Reads from another process (remote.h). */
#include "remote.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096u
#define IOV_MAX_PAGES 64

ssize_t tm_remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    /* One remote element per page: the kernel stops at the first element
     * it cannot read and returns what came before. */
    struct iovec remote[IOV_MAX_PAGES];
    struct iovec local = {(char *)buf + done, 0};
    int nr = 0;
    for (uintptr_t a = addr + done; nr < IOV_MAX_PAGES && done + local.iov_len < len; nr++) {
      size_t chunk = PAGE - (a & (PAGE - 1));
      if (chunk > len - done - local.iov_len) chunk = len - done - local.iov_len;
      remote[nr] = (struct iovec){(void *)a, chunk};
      a += chunk;
      local.iov_len += chunk;
    }
    ssize_t got = process_vm_readv(pid, &local, 1, remote, (unsigned long)nr, 0);
    if (got <= 0) break;
    done += (size_t)got;
    if ((size_t)got < local.iov_len) break;
  }
  return done ? (ssize_t)done : -1;
}

ssize_t tm_read_file(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  for (ssize_t r; len + 1 < n && (r = read(fd, buf + len, n - 1 - len)) != 0; len += (size_t)r)
    if (r < 0) {
      close(fd);
      return -1;
    }
  close(fd);
  buf[len] = 0;
  return (ssize_t)len;
}

long long tm_stat_field(const char *stat, int n) {
  const char *p = strrchr(stat, ')');
  if (!p) return -1;
  p++;
  for (int f = 3; f < n && *p; f++) {
    while (*p == ' ') p++;
    while (*p && *p != ' ') p++;
  }
  return *p ? strtoll(p, NULL, 10) : -1;
}
