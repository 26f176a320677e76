/* Scheduling-attribute wrappers keep the real results: names, affinity,
 * nice, policy and concurrency set through them read back unchanged, and
 * errors (bad thread name length, bad policy) are glibc's. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "preload_check.h"

static _Atomic int go;
static void *idle(void *arg) {
  while (!go) usleep(1000);
  return arg;
}

int main(void) {
  CHECK_INTERPOSED(pthread_setname_np);
  CHECK_INTERPOSED(sched_setaffinity);
  pthread_t th;
  char name[16];
  CHECK_EQ(pthread_create(&th, NULL, idle, NULL), 0);
  CHECK_EQ(pthread_setname_np(th, "tm-worker"), 0);
  CHECK_EQ(pthread_getname_np(th, name, sizeof name), 0);
  CHECK(strcmp(name, "tm-worker") == 0);
  CHECK_EQ(pthread_setname_np(th, "a-name-longer-than-fifteen"), ERANGE);

  cpu_set_t set, back;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  CHECK_EQ(pthread_setaffinity_np(th, sizeof set, &set), 0);
  CHECK_EQ(pthread_getaffinity_np(th, sizeof back, &back), 0);
  CHECK(CPU_EQUAL(&set, &back));
  CHECK_EQ(sched_setaffinity(0, sizeof set, &set), 0);
  CHECK_EQ(sched_getaffinity(0, sizeof back, &back), 0);
  CHECK(CPU_EQUAL(&set, &back));
  CPU_ZERO(&set);
  errno = 0;
  CHECK_EQ(sched_setaffinity(0, sizeof set, &set), -1); /* empty mask */
  CHECK_EQ(errno, EINVAL);

  CHECK_EQ(setpriority(PRIO_PROCESS, 0, 5), 0);
  errno = 0;
  CHECK_EQ(getpriority(PRIO_PROCESS, 0), 5);
  struct sched_param sp = {0};
  CHECK_EQ(sched_setscheduler(0, SCHED_BATCH, &sp), 0);
  CHECK_EQ(sched_getscheduler(0), SCHED_BATCH);
  CHECK_EQ(pthread_setschedparam(th, SCHED_IDLE, &sp), 0);
  int policy;
  CHECK_EQ(pthread_getschedparam(th, &policy, &sp), 0);
  CHECK_EQ(policy, SCHED_IDLE);
  CHECK_EQ(pthread_setschedparam(th, 12345, &sp), EINVAL);
  CHECK_EQ(sched_setparam(0, &sp), 0);
  CHECK_EQ(pthread_setconcurrency(3), 0);
  CHECK_EQ(pthread_getconcurrency(), 3);
  CHECK_EQ(pthread_setconcurrency(-1), EINVAL);
  CHECK_EQ(sched_yield(), 0);

  /* prctl: a thread renaming itself (Rust's std), other options untouched. */
  CHECK_INTERPOSED(prctl);
  CHECK_EQ(prctl(PR_SET_NAME, "tm-by-prctl-and-more", 0, 0, 0), 0);
  CHECK_EQ(prctl(PR_GET_NAME, name, 0, 0, 0), 0);
  CHECK(strcmp(name, "tm-by-prctl-and") == 0); /* the kernel keeps 15 bytes */
  errno = 0;
  CHECK_EQ(prctl(-1, 0, 0, 0, 0), -1);
  CHECK_EQ(errno, EINVAL);
  CHECK_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
  go = 1;
  CHECK_EQ(pthread_join(th, NULL), 0);
  return 0;
}
