/* rwlock_hold: ground truth for a read-mostly rwlock's write holds.
 *
 * R "reader" threads take table_lock for reading in a tight loop (a few
 * hundred thousand short reads each); one "writer" takes it for writing W
 * times, keeps it H ms (spinning: the readers wait meanwhile), then pauses
 * G ms. The writer times its own holds, from the lock's return to the
 * unlock call; the truth printed at exit is that write hold time and the
 * exact read and write counts. A rwlock's hold time is its time held for
 * writing: readers hold it together.
 *
 * --read-us makes each read hold the lock that long (a spin): readers that
 * overlap then keep the writer out, as glibc's rwlock lets a reader in
 * while a writer waits (the starved_writer finding's workload); --read-s
 * stops the readers after that long, so that the writer gets through.
 * Truth: the writer's wall time inside its wrlock calls (write_wait_s).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

/* Global, so that a tool names it by symbol. */
pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;

static double hold_ms = 0.2, gap_ms = 0.5, read_us = 0, read_s = 0, start_s;
static int writes = 400;
static atomic_int done;
static volatile long table; /* what the lock guards */

typedef struct reader_truth {
  pthread_t thread;
  int index;
  long reads;
} reader_truth;

static void *reader(void *arg) {
  reader_truth *r = arg;
  wl_name_self("reader", r->index);
  while (!atomic_load_explicit(&done, memory_order_relaxed) &&
         (read_s <= 0 || wl_now_s() - start_s < read_s)) {
    wl_check(pthread_rwlock_rdlock(&table_lock), "pthread_rwlock_rdlock");
    long seen = table;
    (void)seen;
    if (read_us > 0) wl_spin_cpu_ms(read_us / 1000);
    wl_check(pthread_rwlock_unlock(&table_lock), "pthread_rwlock_unlock");
    r->reads++;
    wl_busy_loop(200);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int readers = 2;
  const wl_flag flags[] = {
      {"readers", WL_INT, &readers, "threads that read in a loop"},
      {"writes", WL_INT, &writes, "write holds"},
      {"hold-ms", WL_DOUBLE, &hold_ms, "how long each write hold lasts"},
      {"gap-ms", WL_DOUBLE, &gap_ms, "pause after each write"},
      {"read-us", WL_DOUBLE, &read_us, "CPU time each read holds the lock (0: an instant)"},
      {"read-s", WL_DOUBLE, &read_s, "seconds the readers read (0: until the writes end)"},
  };
  wl_parse_flags(argc, argv, "Readers in a loop, one writer now and then.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (readers < 1) readers = 1;
  reader_truth *rs = calloc((size_t)readers, sizeof *rs);
  if (!rs) return 1;
  double start = start_s = wl_now_s();
  for (int i = 0; i < readers; i++) {
    rs[i].index = i;
    wl_check(pthread_create(&rs[i].thread, NULL, reader, &rs[i]), "pthread_create");
  }
  double write_hold_s = 0, write_wait_s = 0;
  for (int w = 0; w < writes; w++) {
    double asked = wl_now_s();
    wl_check(pthread_rwlock_wrlock(&table_lock), "pthread_rwlock_wrlock");
    double t0 = wl_now_s();
    write_wait_s += t0 - asked;
    wl_spin_cpu_ms(hold_ms);
    table++;
    write_hold_s += wl_now_s() - t0;
    wl_check(pthread_rwlock_unlock(&table_lock), "pthread_rwlock_unlock");
    wl_sleep_ms(gap_ms);
  }
  atomic_store(&done, 1);
  long reads = 0;
  for (int i = 0; i < readers; i++) {
    wl_check(pthread_join(rs[i].thread, NULL), "pthread_join");
    reads += rs[i].reads;
  }
  printf(
      "{\"workload\":\"rwlock_hold\",\"wall_s\":%.6f,\"lock_symbol\":\"table_lock\","
      "\"reads\":%ld,\"writes\":%d,\"write_hold_s\":%.6f,\"write_wait_s\":%.6f,"
      "\"writer_tid\":%d}\n",
      wl_now_s() - start, reads, writes, write_hold_s, write_wait_s, (int)gettid());
  free(rs);
  return 0;
}
