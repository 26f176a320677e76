/* exec_chain COUNT GAP_MS [PADDING]: execs itself COUNT times, GAP_MS
 * apart, then exits 0. Each image's argv[1] is the execs still to come, so
 * a watcher's record of an exec says which one it was. The first exec adds
 * PADDING small environment variables (default 100,000): the kernel fills
 * in their pointers after the new image's arguments are readable and
 * before its stack start is final, which widens that moment from
 * microseconds to about a millisecond for a watcher to land in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char **padded_environment(long padding) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + (size_t)padding + 1, sizeof *env);
  char *text = malloc((size_t)padding * 24);
  if (!env || !text) return NULL;
  memcpy(env, environ, n * sizeof *env);
  for (long i = 0; i < padding; i++) {
    char *v = text + i * 24;
    snprintf(v, 24, "P%ld=", i);
    env[n + (size_t)i] = v;
  }
  return env;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: exec_chain COUNT GAP_MS [PADDING]\n");
    return 2;
  }
  long count = atol(argv[1]), gap_ms = atol(argv[2]);
  long padding = argc > 3 ? atol(argv[3]) : 100000;
  struct timespec gap = {gap_ms / 1000, (gap_ms % 1000) * 1000000L};
  nanosleep(&gap, NULL);
  if (count <= 0) return 0;
  char next[32];
  snprintf(next, sizeof next, "%ld", count - 1);
  char *args[] = {argv[0], next, argv[2], "0", NULL};
  char **env = padding > 0 ? padded_environment(padding) : environ;
  if (!env) {
    perror("exec_chain: environment");
    return 1;
  }
  execve("/proc/self/exe", args, env);
  perror("exec_chain: execve");
  return 127;
}
