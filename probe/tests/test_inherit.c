/* A created thread's attributes come from its creator's record and the
 * pthread attr (tm_thread_inherit), not from system calls in the child:
 * checked against what the kernel gives real threads created the same way,
 * and the cases the record cannot tell are left to the child. */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "probe.h"
#include "tm_check.h"

/* What the kernel says of the calling thread, in the record's terms. */
typedef struct {
  char name[TM_NAME_BYTES];
  int policy, priority, nice;
  uint64_t affinity[4];
  uint32_t tid;
  tm_thread *child; /* attaches to it first, as the trampoline does */
} seen;

static void *look(void *arg) {
  seen *s = arg;
  tm_thread_attach(s->child);
  prctl(PR_GET_NAME, s->name, 0, 0, 0);
  struct sched_param sp;
  s->policy = sched_getscheduler(0);
  sched_getparam(0, &sp);
  s->priority = sp.sched_priority;
  s->nice = getpriority(PRIO_PROCESS, 0);
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  memcpy(s->affinity, &set, sizeof s->affinity);
  s->tid = (uint32_t)gettid();
  return NULL;
}

/* Claims a child of creator for attr, creates a real thread with attr that
 * attaches to it and checks the record against the kernel (attributes read
 * by the child itself where they were not known). Returns whether they
 * were known at the claim. */
static bool check_against_kernel(tm_thread *creator, const pthread_attr_t *attr) {
  tm_thread *child = tm_thread_claim(NULL, NULL, creator->tid);
  CHECK(child != NULL);
  tm_thread_inherit(child, creator, attr);
  bool known = child->attrs_known;
  seen s = {.child = child};
  pthread_t th;
  CHECK_EQ(pthread_create(&th, attr, look, &s), 0);
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK_EQ(child->tid, s.tid); /* read from glibc's thread descriptor */
  CHECK_EQ(strncmp(child->name, s.name, TM_NAME_BYTES), 0);
  CHECK_EQ(child->policy, s.policy);
  CHECK_EQ(child->priority, s.priority);
  CHECK_EQ(child->nice, s.nice);
  CHECK_EQ(memcmp(child->affinity, s.affinity, sizeof s.affinity), 0);
  tm_thread_unclaim(child);
  return known;
}

int main(void) {
  prctl(PR_SET_NAME, "inherit-test", 0, 0, 0);
  if (setpriority(PRIO_PROCESS, 0, 3) != 0) return 77;
  tm_thread *me = tm_thread_register_self(NULL, 0); /* reads the kernel */
  CHECK(me != NULL);
  CHECK_EQ(me->nice, 3);

  /* Defaults: everything from the creator. */
  CHECK(check_against_kernel(me, NULL));
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  CHECK(check_against_kernel(me, &attr));

  /* A mask in the attr: the child's. */
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  pthread_attr_setaffinity_np(&attr, sizeof one, &one);
  CHECK(check_against_kernel(me, &attr));
  pthread_attr_destroy(&attr);

  /* Explicit scheduling: left to the child. */
  pthread_attr_init(&attr);
  pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
  pthread_attr_setschedpolicy(&attr, SCHED_BATCH);
  CHECK(!check_against_kernel(me, &attr));
  pthread_attr_destroy(&attr);

  /* A restricted creator: its mask when the attr has none (the kernel's
   * copy), but an attr reading as every CPU cannot be told from none. */
  cpu_set_t before;
  sched_getaffinity(0, sizeof before, &before);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return 1;
  memcpy(me->affinity, &one, sizeof me->affinity); /* what the wrapper records */
  CHECK(!check_against_kernel(me, NULL));
  pthread_attr_init(&attr);
  CHECK(!check_against_kernel(me, &attr));
  pthread_attr_setaffinity_np(&attr, sizeof one, &one);
  CHECK(check_against_kernel(me, &attr));
  pthread_attr_destroy(&attr);
  sched_setaffinity(0, sizeof before, &before);
  memcpy(me->affinity, &before, sizeof me->affinity);

  /* A creator the record cannot vouch for: real-time, or a negative nice
   * (SCHED_RESET_ON_FORK would change the child's). */
  me->policy = SCHED_FIFO;
  CHECK(!check_against_kernel(me, NULL));
  me->policy = SCHED_OTHER;
  me->nice = -1;
  CHECK(!check_against_kernel(me, NULL));
  me->nice = 3;
  CHECK(check_against_kernel(me, NULL));
  return 0;
}
