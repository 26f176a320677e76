/* stdio_lock: threads writing to one shared FILE take turns on its lock.
 *
 * glibc locks a FILE inside every stdio call (here fprintf) with a lock of
 * its own, no pthread mutex: threadmon finds it by sampling (a hidden lock)
 * and must name the stdio function the program called. Each thread first
 * names itself (pthread_setname_np), as threads often do, which leaves
 * return addresses into pthread_setname_np on its stack where fprintf's
 * frame later lies. The lock is held long per call: the stream is
 * unbuffered and writes to a pipe another thread drains slowly.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wl.h"

static FILE *shared;
static int lines = 200;
static char line[4096];
static int read_fd;

static void *writer(void *arg) {
  wl_name_self("writer", (int)(long)arg);
  long written = 0;
  for (int i = 0; i < lines; i++) written += fprintf(shared, "%d %s", i, line);
  return (void *)written;
}

/* Drains the pipe slowly: each fprintf blocks in write() holding the lock. */
static void *drain(void *arg) {
  long *got = arg;
  char buf[4096];
  ssize_t n;
  while ((n = read(read_fd, buf, sizeof buf)) > 0) {
    *got += n;
    if ((*got / (long)sizeof buf) % 16 == 0) wl_sleep_ms(0.2);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 4;
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "threads writing to the shared FILE"},
      {"lines", WL_INT, &lines, "lines each thread writes"},
  };
  wl_parse_flags(argc, argv, "Threads writing to one FILE take turns on its lock.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (threads < 2 || threads > 64) threads = 4;
  int fds[2];
  if (pipe(fds) != 0) return 1;
  read_fd = fds[0];
  shared = fdopen(fds[1], "w");
  if (!shared) return 1;
  setvbuf(shared, NULL, _IONBF, 0);
  memset(line, 'x', sizeof line - 2);
  line[sizeof line - 2] = '\n';
  double start = wl_now_s();
  long got = 0, written = 0;
  pthread_t th[64], reader;
  wl_check(pthread_create(&reader, NULL, drain, &got), "pthread_create");
  for (long i = 0; i < threads; i++)
    wl_check(pthread_create(&th[i], NULL, writer, (void *)i), "pthread_create");
  for (int i = 0; i < threads; i++) {
    void *w;
    wl_check(pthread_join(th[i], &w), "pthread_join");
    written += (long)w;
  }
  fclose(shared);
  wl_check(pthread_join(reader, NULL), "pthread_join");
  printf("{\"workload\":\"stdio_lock\",\"wall_s\":%.6f,\"threads\":%d,\"lines\":%d,"
         "\"bytes\":%ld,\"program_function\":\"writer\",\"library_function\":\"fprintf\"}\n",
         wl_now_s() - start, threads, lines, got);
  return got == written ? 0 : 1;
}
