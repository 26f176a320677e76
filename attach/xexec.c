/* The watched process's image and its exec (xexec.h). */
#include "xexec.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote.h"

#define CMDLINE_MAX 65536
/* An exec seen before the new image has its arguments in place (between
 * the kernel's start of the stack and its argument area) waits a tick or
 * two for them; after that an empty argv is the image's own. */
#define EMPTY_ARGV_WAITS 3

static void read_exe(pid_t pid, char *exe, size_t n) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
  ssize_t len = readlink(path, exe, n - 1);
  exe[len > 0 ? len : 0] = 0;
}

static void read_cmdline(tm_session *s, pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
  s->cmdline_len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  if (!s->cmdline) s->cmdline = malloc(CMDLINE_MAX);
  ssize_t r;
  while (s->cmdline && s->cmdline_len < CMDLINE_MAX &&
         (r = read(fd, s->cmdline + s->cmdline_len, CMDLINE_MAX - s->cmdline_len)) > 0)
    s->cmdline_len += (size_t)r;
  close(fd);
}

/* start_stack and arg_start (fields 28 and 48 of /proc/PID/stat), 0 when
 * not shown. */
typedef struct image_stack {
  unsigned long long stack_start, arg_start;
} image_stack;

static image_stack read_image_stack(pid_t pid) {
  char path[64], stat[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  image_stack st = {0, 0};
  if (tm_read_file(path, stat, sizeof stat) <= 0) return st;
  long long start = tm_stat_field(stat, 28), args = tm_stat_field(stat, 48);
  st.stack_start = start > 0 ? (unsigned long long)start : 0;
  st.arg_start = args > 0 ? (unsigned long long)args : 0;
  return st;
}

/* An exec sets start_stack twice: to its arguments' start once they are
 * on the new stack, then below them once argc, the pointers and the
 * auxiliary vector are (load_elf_binary). In between the arguments are
 * readable already: a stack read there is no image's, and the next read
 * looked like another exec (docs/attach.md, "A target that execs"). */
static bool image_in_place(image_stack st) {
  return st.stack_start && (!st.arg_start || st.stack_start < st.arg_start);
}

void tm_xexec_read(tm_xexec *x, tm_session *s, pid_t pid) {
  x->pid = pid;
  x->empty_argv_waits = 0;
  image_stack st = read_image_stack(pid);
  x->start_stack = image_in_place(st) ? st.stack_start : 0;
  read_exe(pid, s->exe, sizeof s->exe);
  read_cmdline(s, pid);
}

bool tm_xexec_check(tm_xexec *x, tm_session *s) {
  /* 0: the stack is not shown (no ptrace access: nor is the executable),
   * the process has ended, or its exec has not placed the new stack yet. */
  image_stack st = read_image_stack(x->pid);
  if (!st.stack_start) return false;
  char exe[sizeof s->exe];
  read_exe(x->pid, exe, sizeof exe);
  bool moved = x->start_stack && st.stack_start != x->start_stack;
  if (!moved && (!exe[0] || !strcmp(exe, s->exe))) {
    if (image_in_place(st)) x->start_stack = st.stack_start;
    return false;
  }
  /* An exec: described once its image is in place, and read again then,
   * so that its stack, executable and arguments are all the new image's. */
  if (!image_in_place(st)) return false;
  char *old = s->cmdline;
  size_t old_len = s->cmdline_len;
  s->cmdline = NULL;
  read_exe(x->pid, exe, sizeof exe);
  read_cmdline(s, x->pid);
  image_stack after = read_image_stack(x->pid);
  bool settled = after.stack_start == st.stack_start;
  if (!settled || (!s->cmdline_len && x->empty_argv_waits++ < EMPTY_ARGV_WAITS)) {
    free(s->cmdline);
    s->cmdline = old;
    s->cmdline_len = old_len;
    return false;
  }
  free(old);
  x->empty_argv_waits = 0;
  x->start_stack = st.stack_start;
  snprintf(s->exe, sizeof s->exe, "%s", exe);
  tm_session_send_exec(s, tm_now_ns(), TM_TO_ALL);
  return true;
}
