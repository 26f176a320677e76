/* Attaches to a running target (argv[1..]) from outside and compares what
 * it reads with what the target says about itself (target_truth.h): every
 * waiting thread's kind of wait, futex word and owner, and the deadlock
 * cycle, found in one pass in well under a second. Then checks that the
 * target did not notice: its threads, their states, system calls and
 * context-switch counts, its descriptors (no perf event among them) and
 * its tracer are what they were before. With --truth-threads, only the
 * threads the truth names are compared (a runtime that keeps waking its
 * own threads, like Go's sysmon, changes the others). */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../probe/tests/tm_check.h"
#include "deadlock.h"
#include "remote.h"
#include "snapshot.h"

#define TRUTHS 16
#define LOOK_BUDGET_S 1.0

typedef struct truth {
  pid_t tid, owner;
  char kind[32];
  unsigned long addr;
  size_t size;
} truth;

static truth truths[TRUTHS];
static int ntruths;
static pid_t cycle_tids[2];
static int truth_threads_only;

static int compared(const char *tid) {
  if (!truth_threads_only) return 1;
  for (int i = 0; i < ntruths; i++)
    if (truths[i].tid == atoi(tid)) return 1;
  return 0;
}

/* Everything the target could show of having been looked at. */
typedef struct observed {
  char text[16384];
} observed;

static void append_file(observed *o, const char *path, const char *only) {
  char buf[4096];
  if (tm_read_file(path, buf, sizeof buf) < 0) return;
  for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
    if (!only || strstr(line, only)) {
      size_t len = strlen(o->text);
      snprintf(o->text + len, sizeof o->text - len, "%s: %s\n", path, line);
    }
}

static void observe(pid_t pid, observed *o) {
  o->text[0] = 0;
  char path[320];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  append_file(o, path, "TracerPid");
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  CHECK(d);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || !compared(e->d_name)) continue;
    snprintf(path, sizeof path, "/proc/%d/task/%s/syscall", (int)pid, e->d_name);
    append_file(o, path, NULL);
    snprintf(path, sizeof path, "/proc/%d/task/%s/status", (int)pid, e->d_name);
    append_file(o, path, "State");
    append_file(o, path, "ctxt_switches");
  }
  closedir(d);
  snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
  d = opendir(path);
  CHECK(d);
  int fds = 0, perf = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char link[320], target[128];
    snprintf(link, sizeof link, "/proc/%d/fd/%s", (int)pid, e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    target[n > 0 ? n : 0] = 0;
    fds++;
    perf += strstr(target, "perf_event") != NULL;
  }
  closedir(d);
  CHECK_EQ(perf, 0);
  size_t len = strlen(o->text);
  snprintf(o->text + len, sizeof o->text - len, "fds: %d\n", fds);
}

static pid_t start_target(char **argv) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    /* A failed check exits the test: the target must not outlive it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  char line[256];
  alarm(30);
  while (fgets(line, sizeof line, in) && strcmp(line, "ready\n")) {
    truth *t = &truths[ntruths];
    if (ntruths < TRUTHS && sscanf(line, "truth %d %31s %lx %zu %d", &t->tid, t->kind, &t->addr,
                                   &t->size, &t->owner) == 5)
      ntruths++;
    sscanf(line, "cycle %d %d", &cycle_tids[0], &cycle_tids[1]);
  }
  CHECK(!strcmp(line, "ready\n"));
  fclose(in);
  alarm(0);
  return pid;
}

static void check_truth(const tm_snapshot *s, const truth *t) {
  const tm_thread_state *th = tm_snapshot_thread(s, t->tid);
  fprintf(stderr, "  %d %s: read %s (%s) word %#lx owner %d, %d frames, %d unwound\n",
          (int)t->tid, t->kind, th ? tm_wait_kind_name(th->wait.kind) : "-",
          th ? th->wait.what : "-", th ? (unsigned long)th->futex.word : 0ul,
          th ? (int)th->owner : 0, th ? th->npcs : 0, th ? th->exact : 0);
  CHECK(th);
  CHECK_EQ(th->state, 'S');
  CHECK(th->futex.op != TM_FUTEX_NONE);
  CHECK(!strcmp(tm_wait_kind_name(th->wait.kind), t->kind));
  /* Frames are unwound by .eh_frame where the module has one, at least
   * the innermost function's (a gcc -static program and Go's runtime have
   * no .eh_frame_hdr: scan only). */
  CHECK(th->exact >= 1 && th->exact <= th->npcs);
  if (t->size) CHECK(th->futex.word >= t->addr && th->futex.word < t->addr + t->size);
  if (t->owner > 0) CHECK_EQ(th->owner, t->owner);
  if (t->owner < 0) CHECK(th->owner == 0 && th->owner_gone == -t->owner);
}

int main(int argc, char **argv) {
  truth_threads_only = argc > 1 && !strcmp(argv[1], "--truth-threads");
  argv += truth_threads_only;
  argc -= truth_threads_only;
  CHECK(argc >= 2);
  pid_t pid = start_target(argv + 1);
  CHECK(ntruths > 0);
  /* Its main thread says "ready" before it blocks in its own last wait:
   * the state before is the one that stays the same for 50 ms. */
  static observed before, after;
  observe(pid, &before);
  for (int tries = 0; tries < 100; tries++) {
    nanosleep(&(struct timespec){0, 50000000}, NULL);
    observe(pid, &after);
    if (!strcmp(before.text, after.text)) break;
    before = after;
  }

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  tm_snapshot s;
  CHECK(tm_snapshot_take(pid, &s));
  tm_cycle cycles[4];
  size_t ncycles = tm_find_deadlocks(&s, cycles, 4);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  fprintf(stderr, "%s: %zu threads, %zu cycles, read in %.2f ms\n", argv[1], s.nthreads, ncycles,
          secs * 1e3);
  CHECK(secs < LOOK_BUDGET_S);

  for (int i = 0; i < ntruths; i++) check_truth(&s, &truths[i]);
  if (cycle_tids[0]) {
    CHECK_EQ(ncycles, 1);
    CHECK_EQ(cycles[0].n, 2);
    for (int k = 0; k < 2; k++)
      CHECK(cycles[0].members[k]->tid == cycle_tids[0] || cycles[0].members[k]->tid == cycle_tids[1]);
    CHECK(cycles[0].members[0]->tid != cycles[0].members[1]->tid);
  } else {
    CHECK_EQ(ncycles, 0);
  }
  tm_snapshot_free(&s);

  observe(pid, &after);
  if (strcmp(before.text, after.text)) {
    fprintf(stderr, "the target changed:\n--- before\n%s--- after\n%s", before.text, after.text);
    return 1;
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return 0;
}
