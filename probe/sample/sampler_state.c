#include "sampler_state.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void tm_sampler_close_inherited(const tm_sampler *m) {
  for (const tm_sampler_thread *st = m->threads.all; st; st = st->next) {
    for (int i = 0; i < TM_TASK_FILES; i++)
      if (st->fds.fd[i] >= 0) close(st->fds.fd[i]);
    for (int i = 0; i < TM_PC_COUNT; i++)
      if (st->pc.fd[i] >= 0) close(st->pc.fd[i]);
  }
}

void tm_sampler_reset(tm_sampler *m) {
  while (m->threads.all) tm_state_free(m, m->threads.all);
  tm_states_unmap(&m->threads);
  /* Records of the parent's threads: their tids mean nothing here. */
  free(m->sw.tids);
  for (unsigned i = 0; i < WHEEL_TICKS; i++) free(m->plan.wheel[i].slot);
  tm_rescan_free(&m->rescan);
  free(m->objects.sent);
  tm_frames_free(&m->fr);
  tm_proc_close(&m->proc);
  free(m->sites.pairs);
  free(m->uts.tid);
  free(m->uts.from);
  free(m->uts.to);
  free(m->uts.delta);
  free(m->uts.kind);
  tm_hidden_free(&m->hidden);
  memset(m, 0, sizeof *m);
}

uint64_t tm_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
