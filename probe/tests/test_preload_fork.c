/* fork() in a threaded program under the probe: the child (one thread, new
 * tid) can lock, create and join threads and exit with its status; the
 * parent carries on. A mutex held by another parent thread at fork time is
 * not taken by the child. The probe follows each child into its own capture
 * (OUT.PID.tmcap), which the parent checks and removes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "preload_check.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int stop;
static long counter;

static void *busy(void *arg) {
  while (!stop) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
  }
  return arg;
}

static void *child_worker(void *arg) {
  pthread_mutex_t *mine = arg;
  for (int i = 0; i < 1000; i++) {
    CHECK_EQ(pthread_mutex_lock(mine), 0);
    CHECK_EQ(pthread_mutex_unlock(mine), 0);
  }
  return (void *)7;
}

/* The child's capture beside the parent's: "x.tmcap" -> "x.PID.tmcap". */
static void check_and_remove_child_capture(pid_t pid) {
  const char *out = getenv("THREADMON_OUTPUT");
  if (!out) return;
  const char *ext = strrchr(out, '.');
  CHECK(ext != NULL);
  char path[4096];
  snprintf(path, sizeof path, "%.*s.%d%s", (int)(ext - out), out, (int)pid, ext);
  struct stat st;
  CHECK_EQ(stat(path, &st), 0);
  CHECK(st.st_size > 64); /* more than the header and a Hello */
  CHECK_EQ(unlink(path), 0);
}

int main(void) {
  pthread_t th[2];
  for (int i = 0; i < 2; i++) CHECK_EQ(pthread_create(&th[i], NULL, busy, NULL), 0);
  usleep(10000);
  for (int round = 0; round < 3; round++) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      pthread_mutex_t mine = PTHREAD_MUTEX_INITIALIZER;
      pthread_t w;
      void *ret;
      CHECK_EQ(pthread_create(&w, NULL, child_worker, &mine), 0);
      CHECK_EQ(pthread_join(w, &ret), 0);
      CHECK(ret == (void *)7);
      usleep(5000);
      exit(40 + round);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 40 + round);
    check_and_remove_child_capture(pid);
  }
  stop = 1;
  for (int i = 0; i < 2; i++) CHECK_EQ(pthread_join(th[i], NULL), 0);
  CHECK(counter > 0);
  return 0;
}
