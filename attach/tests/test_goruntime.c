/* A Go program's Ms named from its runtime (goruntime.h), against what
 * go_ms_target says of itself: the main thread is M0, a thread in a read
 * runs its goroutine, a parked locked thread has none but its goroutine
 * locked to it, exactly one M is sysmon and one the template thread, and
 * every thread of the process is an M. Usage: test_goruntime
 * TARGET_WITHOUT_DWARF TARGET...: the first must be found as Go and
 * refused in one line, every other one (built by other Go versions) read.
 * A C process (this one) has no Go runtime. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../probe/tests/tm_check.h"
#include "goruntime.h"

typedef struct truth {
  pid_t main, insyscall, parked;
  unsigned long long insyscall_goid, parked_goid;
} truth;

static pid_t start(const char *path, truth *t) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed check must not leave it running */
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(path, path, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  char line[256] = "";
  alarm(60);
  while (fgets(line, sizeof line, in) && strcmp(line, "ready\n")) {
    sscanf(line, "main %d", &t->main);
    sscanf(line, "insyscall %d %llu", &t->insyscall, &t->insyscall_goid);
    sscanf(line, "parked %d %llu", &t->parked, &t->parked_goid);
  }
  CHECK(!strcmp(line, "ready\n"));
  fclose(in);
  alarm(0);
  return pid;
}

static void stop(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void read_go(pid_t pid, tm_go_runtime *g, tm_maps *maps, tm_symtabs **syms) {
  CHECK(tm_maps_load(pid, maps, NULL));
  *syms = tm_symtabs_new(maps);
  CHECK(*syms);
  tm_go_runtime_read(pid, maps, *syms, g);
}

static void named(const char *path) {
  truth t = {0};
  pid_t pid = start(path, &t);
  CHECK_EQ(t.main, pid);
  tm_maps maps;
  tm_symtabs *syms;
  tm_go_runtime g;
  read_go(pid, &g, &maps, &syms);
  fprintf(stderr, "%s: found %d, read %d (%s), %zu Ms\n", path, g.found, g.read, g.why, g.nms);
  CHECK(g.found && g.read);
  int sysmon = 0, template = 0;
  for (size_t i = 0; i < g.nms; i++) {
    const tm_go_m *m = &g.ms[i];
    const char *role = tm_go_m_role(m);
    fprintf(stderr, "  M%lld tid %d G%llu locked G%llu start %s%s%s\n", (long long)m->id,
            (int)m->tid, (unsigned long long)m->goid, (unsigned long long)m->locked_goid,
            m->start[0] ? m->start : "-", role ? ": " : "", role ? role : "");
    if (role && !strcmp(role, "sysmon")) sysmon++;
    if (role && !strcmp(role, "template thread")) template++;
    if (role) CHECK(m->tid != t.insyscall && m->tid != t.parked && m->tid != pid);
  }
  CHECK_EQ(sysmon, 1);
  CHECK_EQ(template, 1);
  const tm_go_m *m0 = tm_go_m_of(&g, pid), *in = tm_go_m_of(&g, t.insyscall),
                *parked = tm_go_m_of(&g, t.parked);
  CHECK(m0 && in && parked);
  CHECK_EQ(m0->id, 0);
  CHECK_EQ(in->goid, t.insyscall_goid);
  CHECK_EQ(in->locked_goid, t.insyscall_goid);
  CHECK_EQ(parked->goid, 0);
  CHECK_EQ(parked->locked_goid, t.parked_goid);
  CHECK(in->id != parked->id); /* either may be m0: it runs whatever is runnable */
  /* Every thread of a Go program is one of its Ms. */
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
  DIR *d = opendir(dir);
  CHECK(d);
  int tasks = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') {
      tasks++;
      if (!tm_go_m_of(&g, atoi(e->d_name))) fprintf(stderr, "  thread %s is no M\n", e->d_name);
      CHECK(tm_go_m_of(&g, atoi(e->d_name)));
    }
  closedir(d);
  CHECK(tasks >= 5); /* main, sysmon, template, the two locked ones */
  tm_go_runtime_free(&g);
  tm_symtabs_free(syms);
  tm_maps_free(&maps);
  stop(pid);
}

static void without_dwarf(const char *path) {
  truth t = {0};
  pid_t pid = start(path, &t);
  tm_maps maps;
  tm_symtabs *syms;
  tm_go_runtime g;
  read_go(pid, &g, &maps, &syms);
  fprintf(stderr, "%s: found %d, read %d: %s\n", path, g.found, g.read, g.why);
  CHECK(g.found && !g.read && g.nms == 0);
  CHECK(strstr(g.why, "no DWARF") && strstr(g.why, "its threads are not named"));
  tm_go_runtime_free(&g);
  tm_symtabs_free(syms);
  tm_maps_free(&maps);
  stop(pid);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_goruntime TARGET_WITHOUT_DWARF TARGET...\n");
    return 2;
  }
  tm_maps maps;
  tm_symtabs *syms;
  tm_go_runtime g;
  read_go(getpid(), &g, &maps, &syms);
  CHECK(!g.found && g.nms == 0);
  tm_symtabs_free(syms);
  tm_maps_free(&maps);
  without_dwarf(argv[1]);
  for (int i = 2; i < argc; i++) named(argv[i]);
  fprintf(stderr, "ok\n");
  return 0;
}
