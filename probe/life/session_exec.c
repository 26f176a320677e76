/* The exec family: end the session (Goodbye END_EXEC, flushed) before the
 * image is replaced; the new image, still preloaded, opens its own. glibc's
 * internal calls between these functions do not go through the PLT, so
 * each entry point is wrapped and forwards to its own real function. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "session.h"

#define TM_EXPORT __attribute__((visibility("default")))

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

/* Stores the next definition of name into *fn (a function pointer);
 * memcpy because ISO C has no object-to-function pointer conversion. */
static bool real(const char *name, void *fn) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) errno = ENOSYS;
  memcpy(fn, &f, sizeof f);
  return f != NULL;
}

/* An explicit environment without our lineage, or with an older one (a
 * shell passes the environment it started with, from before a failed exec
 * opened a newer session), would make the new image truncate a capture of
 * this process: pass a copy that carries ours. Returns envp itself when
 * nothing is needed; *entry_at is where the copy holds our entry. */
static char *const *with_lineage(char *const envp[], char ***owned, size_t *entry_at) {
  *owned = NULL;
  const char *mine = getenv("THREADMON_SESSION");
  if (!mine || !envp) return envp;
  size_t n = 0, at = (size_t)-1;
  for (; envp[n]; n++)
    if (!strncmp(envp[n], "THREADMON_SESSION=", 18)) {
      if (!strcmp(envp[n] + 18, mine)) return envp;
      at = n;
    }
  char **copy = malloc((n + 2) * sizeof *copy);
  char *entry = malloc(strlen(mine) + 19);
  if (!copy || !entry) {
    free(copy);
    free(entry);
    return envp;
  }
  strcpy(entry, "THREADMON_SESSION=");
  strcat(entry, mine);
  for (size_t i = 0; i < n; i++) copy[i] = envp[i];
  if (at == (size_t)-1) at = n++;
  copy[at] = entry;
  copy[n] = NULL;
  *owned = copy;
  *entry_at = at;
  return copy;
}

static void free_lineage(char **owned, size_t entry_at) {
  if (!owned) return;
  free(owned[entry_at]);
  free(owned);
}

/* Runs before every real exec. A shell looking for a command calls execve
 * on each directory of PATH in turn: a path that cannot be executed leaves
 * the session running, instead of ending it and opening a new capture
 * after each failure. (path NULL: the search happens inside libc.) */
static void before_exec(const char *path) {
  if (!atomic_load_explicit(&tm_active, memory_order_relaxed)) return;
  if (path && faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) != 0) return;
  tm_session_end_for_exec();
}

static int after_failure(int r) {
  int saved = errno;
  tm_session_exec_failed();
  errno = saved;
  return r;
}

/* The exported forms' bodies, static so that the variadic forms below reach
 * them directly: a call to execve itself would bind to the first execve in
 * the process (probe/tests/check_selfcalls.py). */
static int exec_ve(const char *path, char *const argv[], char *const envp[]) {
  execve_fn f;
  if (!real("execve", &f)) return -1;
  char **owned;
  size_t entry_at;
  char *const *env = with_lineage(envp, &owned, &entry_at);
  before_exec(path);
  int r = after_failure(f(path, argv, env));
  free_lineage(owned, entry_at);
  return r;
}

TM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  execve_fn f;
  if (!real("execvpe", &f)) return -1;
  char **owned;
  size_t entry_at;
  char *const *env = with_lineage(envp, &owned, &entry_at);
  before_exec(strchr(file, '/') ? file : NULL);
  int r = after_failure(f(file, argv, env));
  free_lineage(owned, entry_at);
  return r;
}

TM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  fexecve_fn f;
  if (!real("fexecve", &f)) return -1;
  char **owned;
  size_t entry_at;
  char *const *env = with_lineage(envp, &owned, &entry_at);
  before_exec(NULL);
  int r = after_failure(f(fd, argv, env));
  free_lineage(owned, entry_at);
  return r;
}

static int exec_v(const char *path, char *const argv[]) {
  execv_fn f;
  if (!real("execv", &f)) return -1;
  before_exec(path);
  return after_failure(f(path, argv));
}

static int exec_vp(const char *file, char *const argv[]) {
  execv_fn f;
  if (!real("execvp", &f)) return -1;
  before_exec(strchr(file, '/') ? file : NULL);
  return after_failure(f(file, argv));
}

TM_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  return exec_ve(path, argv, envp);
}
TM_EXPORT int execv(const char *path, char *const argv[]) { return exec_v(path, argv); }
TM_EXPORT int execvp(const char *file, char *const argv[]) { return exec_vp(file, argv); }

/* The variadic forms: collect the arguments, then take the vector path.
 * (Memory is only lost when the exec fails, and then freed.) */
static char **collect(const char *arg0, va_list ap, char ***envp_out) {
  va_list count;
  va_copy(count, ap);
  size_t n = 1;
  if (arg0)
    while (va_arg(count, char *)) n++;
  va_end(count);
  char **argv = malloc((n + 1) * sizeof *argv);
  if (!argv) return NULL;
  argv[0] = (char *)arg0;
  argv[n] = NULL;
  if (arg0)
    for (size_t i = 1; i <= n; i++) argv[i] = va_arg(ap, char *); /* includes the NULL */
  if (envp_out) *envp_out = va_arg(ap, char **);
  return argv;
}

TM_EXPORT int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char **argv = collect(arg, ap, NULL);
  va_end(ap);
  if (!argv) return -1;
  int r = exec_v(path, argv);
  free(argv);
  return r;
}

TM_EXPORT int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char **argv = collect(arg, ap, NULL);
  va_end(ap);
  if (!argv) return -1;
  int r = exec_vp(file, argv);
  free(argv);
  return r;
}

TM_EXPORT int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char **envp = NULL;
  char **argv = collect(arg, ap, &envp);
  va_end(ap);
  if (!argv) return -1;
  int r = exec_ve(path, argv, envp);
  free(argv);
  return r;
}
