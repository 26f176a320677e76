/* Cycles of the wait-for graph (deadlock.h). */
#include "deadlock.h"

#include <stdlib.h>

size_t tm_find_deadlocks(const tm_snapshot *s, tm_cycle *cycles, size_t max) {
  /* 0 unvisited, 1 on the current path, 2 done: the usual colouring for a
   * graph of out-degree one. */
  unsigned char *mark = calloc(s->nthreads ? s->nthreads : 1, 1);
  if (!mark) return 0;
  size_t found = 0;
  for (size_t start = 0; start < s->nthreads; start++) {
    size_t i = start;
    while (mark[i] == 0) {
      mark[i] = 1;
      const tm_thread_state *next = s->threads[i].owner ? tm_snapshot_thread(s, s->threads[i].owner)
                                                        : NULL;
      if (!next) break;
      i = (size_t)(next - s->threads);
    }
    if (mark[i] == 1 && s->threads[i].owner) { /* back on this path: a cycle from i */
      if (found < max) {
        tm_cycle *c = &cycles[found];
        c->n = 0;
        size_t k = i;
        do {
          if (c->n < TM_CYCLE_MAX) c->members[c->n++] = &s->threads[k];
          k = (size_t)(tm_snapshot_thread(s, s->threads[k].owner) - s->threads);
        } while (k != i);
      }
      found++;
    }
    for (size_t k = start; mark[k] == 1;) { /* the path is done */
      mark[k] = 2;
      const tm_thread_state *next = s->threads[k].owner ? tm_snapshot_thread(s, s->threads[k].owner)
                                                        : NULL;
      if (!next) break;
      k = (size_t)(next - s->threads);
    }
  }
  free(mark);
  return found;
}
