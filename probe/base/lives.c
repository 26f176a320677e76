#include "lives.h"

#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "rawsyscall.h"

#define LIFE_LINE_BYTES 512

typedef struct line {
  char buf[LIFE_LINE_BYTES];
  size_t len;
} line;

/* No stdio: snprintf is not async-signal-safe. */
static void put(line *l, const char *s) {
  for (; s && *s && l->len < sizeof l->buf - 1; s++) l->buf[l->len++] = *s == '\n' ? '?' : *s;
}

static void put_u64(line *l, uint64_t v) {
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0 && l->len < sizeof l->buf - 1) l->buf[l->len++] = digits[--n];
}

static void put_field(line *l, const char *key, uint64_t v) {
  put(l, " ");
  put(l, key);
  put(l, "=");
  put_u64(l, v);
}

static uint64_t timeval_ns(struct timeval tv) {
  return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

void tm_lives_write(const char *dir, const tm_life *life) {
  if (!dir || !dir[0]) return;
  char path[TM_PATH_BYTES];
  size_t dlen = strlen(dir);
  if (dlen + sizeof "/lives" > sizeof path) return;
  memcpy(path, dir, dlen);
  memcpy(path + dlen, "/lives", sizeof "/lives");
  line l = {.len = 0};
  put(&l, "life 1 ");
  put(&l, life->kind);
  put_field(&l, "pid", life->pid);
  put_field(&l, "ppid", life->ppid);
  put_field(&l, "t", life->t_ns);
  if (life->since_ns) put_field(&l, "since", life->since_ns);
  if (life->how) {
    put(&l, " how=");
    put(&l, life->how);
    put(&l, " status=");
    if (life->status < 0) put(&l, "-");
    put_u64(&l, (uint64_t)(life->status < 0 ? -(int64_t)life->status : life->status));
    struct rusage own;
    const struct rusage *ru = life->usage;
    if (!ru && !life->cpu_unknown && tm_syscall(SYS_getrusage, RUSAGE_SELF, &own) == 0)
      ru = &own; /* the raw call: no PLT binding in a child */
    if (ru) {
      put_field(&l, "utime", timeval_ns(ru->ru_utime));
      put_field(&l, "stime", timeval_ns(ru->ru_stime));
    }
  }
  if (life->capture) {
    put(&l, " capture=");
    put(&l, life->capture);
  }
  if (life->name) {
    put(&l, " name=");
    put(&l, life->name); /* last: it may hold spaces */
  }
  l.buf[l.len++] = '\n';
  /* Raw system calls: open, write and close are cancellation points, and
   * a fork child writes its line with the forking thread's cancellation
   * still pending (conf_cancel fork_with_cancel_pending). */
  long fd = tm_syscall(SYS_openat, AT_FDCWD, path,
                       O_WRONLY | O_APPEND | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  long w = tm_syscall(SYS_write, fd, l.buf, l.len);
  (void)w; /* nobody to tell */
  tm_syscall(SYS_close, fd);
}
