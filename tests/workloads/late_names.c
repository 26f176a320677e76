/* late_names: threads named by their creator after they already ended.
 *
 * A program that creates a short task, then names it (a pool that labels
 * its jobs, a test harness) may call pthread_setname_np on a thread that
 * has returned but is not joined yet: glibc answers ENOENT (the thread's
 * /proc comm is gone), yet the program meant the name. Each of N threads
 * records its tid and returns; its creator waits GAP ms, names it and joins
 * it. The truth line lists each tid with the name it was given and what
 * pthread_setname_np returned. With --prctl 1 each thread names itself with
 * prctl(PR_SET_NAME) before it returns, as Rust's std before 1.64 does.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "wl.h"

typedef struct task {
  pid_t tid;
  char name[16];
  int self_named;
} task;

static void *report_tid(void *arg) {
  task *k = arg;
  k->tid = gettid();
  if (k->self_named) wl_check(prctl(PR_SET_NAME, k->name, 0, 0, 0), "prctl");
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 8;
  double gap_ms = 2;
  int self_named = 0;
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "threads to create, one after another"},
      {"gap-ms", WL_DOUBLE, &gap_ms, "wait between a thread's creation and its name"},
      {"prctl", WL_INT, &self_named, "1: each thread names itself with prctl(PR_SET_NAME)"},
  };
  wl_parse_flags(argc, argv, "Names each thread after it has ended.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (threads < 1 || threads > 1000) threads = 8;
  printf("{\"workload\":\"late_names\",\"threads\":[");
  for (int i = 0; i < threads; i++) {
    pthread_t th;
    task k = {.self_named = self_named};
    snprintf(k.name, sizeof k.name, "%s-%d", self_named ? "self" : "late", i);
    wl_check(pthread_create(&th, NULL, report_tid, &k), "pthread_create");
    wl_sleep_ms(gap_ms);
    int rc = self_named ? 0 : pthread_setname_np(th, k.name);
    wl_check(pthread_join(th, NULL), "pthread_join");
    printf("%s{\"tid\":%d,\"name\":\"%s\",\"setname_rc\":%d}", i ? "," : "", (int)k.tid, k.name,
           rc);
  }
  printf("]}\n");
  return 0;
}
