/* exec_later PROGRAM [ARGS...]: waits for a line (or the end) on stdin,
 * then execs PROGRAM with its arguments: a process that becomes another
 * program while it is watched from outside, at the moment its watcher
 * chooses. No threads, no truth line of its own. */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: exec_later PROGRAM [ARGS...]\n");
    return 2;
  }
  char c;
  while (read(0, &c, 1) == 1 && c != '\n') {
  }
  execv(argv[1], argv + 1);
  perror("exec_later: execv");
  return 127;
}
