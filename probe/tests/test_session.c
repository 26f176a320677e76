/* End to end: programs run under LD_PRELOAD=libthreadmon.so write
 * captures that decode whole, from Hello to Goodbye.
 * Usage: test_session PROBE.so WORKLOAD TMPDIR */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_session_util.h"
#include "tm_check.h"

static const char *probe, *workload, *dir;

static void path_in_dir(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/%s", dir, name);
  unlink(out);
}

static int run(char *const argv[], char *const env[], int timeout_ms) {
  pid_t pid = run_probed(probe, argv, env);
  return wait_for(pid, timeout_ms);
}

static bool has_source(const Threadmon__Hello *h, Threadmon__Source s) {
  for (size_t i = 0; i < h->n_sources; i++)
    if (h->sources[i] == s) return true;
  return false;
}

/* Hello first, every frame whole and CRC-valid. */
static const Threadmon__Hello *check_stream_start(const capture *c) {
  if (c->damaged) fprintf(stderr, "damaged: %s\n", c->error);
  CHECK(!c->damaged);
  CHECK(c->n > 0);
  CHECK_EQ(c->frames[0]->body_case, THREADMON__FRAME__BODY_HELLO);
  CHECK_EQ(capture_count(c, THREADMON__FRAME__BODY_HELLO), 1);
  return c->frames[0]->hello;
}

static void test_clean_exit(void) {
  char out[512], env_out[600];
  path_in_dir(out, sizeof out, "clean.tmcap");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "contend", "300", "3", NULL};
  char *env[] = {env_out, NULL};
  int status = run(argv, env, 5000);
  CHECK(WIFEXITED(status));
  CHECK_EQ(WEXITSTATUS(status), 3);

  capture c;
  CHECK(capture_load(out, &c) == 0);
  const Threadmon__Hello *h = check_stream_start(&c);
  CHECK_EQ(c.tail_bytes, 0);
  CHECK(h->pid > 0);
  CHECK(h->probe_tid != 0 && h->probe_tid != h->pid);
  CHECK_EQ(h->tick_interval_ns, 10000000);
  CHECK_EQ(h->protocol_version, 1);
  CHECK(h->n_argv == 4 && !strcmp(h->argv[1], "contend"));
  CHECK(strstr(h->exe, "test_session_workload") != NULL);
  CHECK(h->cpu_count >= 1 && h->kernel[0] && h->session_id != 0);
  CHECK(has_source(h, THREADMON__SOURCE__SOURCE_INTERPOSE));
  CHECK(has_source(h, THREADMON__SOURCE__SOURCE_PROC_TASK));
  CHECK(has_source(h, THREADMON__SOURCE__SOURCE_PROC_STAT));
  /* Counting events cost every context switch: only when asked for. */
  CHECK(!has_source(h, THREADMON__SOURCE__SOURCE_PERF_SOFTWARE));
  CHECK(!has_source(h, THREADMON__SOURCE__SOURCE_PERF_HARDWARE));

  /* Goodbye is the last frame and carries the exit status. */
  const Threadmon__Frame *last = c.frames[c.n - 1];
  CHECK_EQ(last->body_case, THREADMON__FRAME__BODY_GOODBYE);
  CHECK_EQ(last->goodbye->reason, THREADMON__END_REASON__END_EXIT);
  CHECK_EQ(last->goodbye->exit_status, 3);
  CHECK(last->goodbye->bytes_written > 1000);

  /* Threads: main, 4 workers (started and ended), the probe, marked. */
  size_t workers = 0, probes = 0, mains = 0;
  for (size_t i = 0; i < c.n; i++) {
    if (c.frames[i]->body_case != THREADMON__FRAME__BODY_THREAD_START) continue;
    const Threadmon__ThreadStart *s = c.frames[i]->thread_start;
    if (s->is_probe) {
      probes++;
      CHECK_EQ(s->tid, h->probe_tid);
    } else if (s->is_main) {
      mains++;
      CHECK_EQ(s->tid, h->pid);
    } else {
      workers++;
      CHECK(strstr(s->start_routine, "worker") != NULL);
    }
  }
  CHECK_EQ(probes, 1);
  CHECK_EQ(mains, 1);
  CHECK_EQ(workers, 4);
  CHECK(capture_count(&c, THREADMON__FRAME__BODY_THREAD_END) >= 4);

  /* Ticks every ~10 ms with CPU samples and the probe's own CPU time. */
  size_t ticks = capture_count(&c, THREADMON__FRAME__BODY_TICK);
  CHECK(ticks >= 15 && ticks <= 60);
  const Threadmon__Tick *t = capture_last(&c, THREADMON__FRAME__BODY_TICK)->tick;
  CHECK_EQ(t->n_cpus, h->cpu_count);
  CHECK(t->probe && t->probe->sampler_cpu_ns > 0);
  bool probe_lwp = false, worker_lwp = false;
  uint64_t prev_seq = 0;
  for (size_t i = 0; i < c.n; i++) {
    if (c.frames[i]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *k = c.frames[i]->tick;
    CHECK_EQ(k->seq, prev_seq + 1);
    prev_seq = k->seq;
    for (size_t j = 0; j < k->n_lwps; j++) {
      if (k->lwps[j]->tid == h->probe_tid) probe_lwp = true;
      else if (k->lwps[j]->oncpu_ns > 10000000 && k->lwps[j]->kstate) worker_lwp = true;
    }
  }
  CHECK(probe_lwp);
  CHECK(worker_lwp);

  /* The static mutex is named from the program's symbol table, and its
   * counters arrive in SyncStats. */
  const Threadmon__SyncObject *mutex = NULL;
  for (size_t i = 0; i < c.n; i++)
    if (c.frames[i]->body_case == THREADMON__FRAME__BODY_SYNC_OBJECT &&
        c.frames[i]->sync_object->kind == THREADMON__SYNC_KIND__KIND_MUTEX)
      mutex = c.frames[i]->sync_object;
  CHECK(mutex != NULL);
  CHECK(!strcmp(mutex->symbol, "lock+0x0"));
  CHECK(!strcmp(mutex->module, "test_session_workload"));
  uint64_t acquisitions = 0;
  for (size_t i = 0; i < c.n; i++) {
    if (c.frames[i]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *k = c.frames[i]->tick;
    for (size_t j = 0; j < k->n_sync; j++)
      if (k->sync[j]->id == mutex->id && k->sync[j]->acquisitions > acquisitions)
        acquisitions = k->sync[j]->acquisitions;
  }
  CHECK(acquisitions > 1000);

  /* Transitions decode into a time line that starts after the Hello. */
  size_t entries = 0;
  for (size_t i = 0; i < c.n; i++) {
    if (c.frames[i]->body_case != THREADMON__FRAME__BODY_TRANSITIONS) continue;
    const Threadmon__Transitions *tr = c.frames[i]->transitions;
    CHECK(tr->n_tid == tr->n_delta_ns && tr->n_tid == tr->n_state);
    uint64_t time = tr->base_ns;
    for (size_t j = 0; j < tr->n_tid; j++) {
      time += (uint64_t)tr->delta_ns[j];
      CHECK(time + 1000000000u > h->start_monotonic_ns);
      entries++;
    }
  }
  CHECK(entries >= 10);
  capture_free(&c);
  printf("ok clean exit: %zu ticks, %zu transitions, %llu acquisitions\n", ticks, entries,
         (unsigned long long)acquisitions);
}

static void test_killed(void) {
  char out[512], env_out[600];
  path_in_dir(out, sizeof out, "killed.tmcap");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "forever", NULL};
  char *env[] = {env_out, NULL};
  pid_t pid = run_probed(probe, argv, env);
  usleep(300000);
  kill(pid, SIGKILL);
  int status = wait_for(pid, 2000);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  capture c;
  CHECK(capture_load(out, &c) == 0);
  check_stream_start(&c);
  CHECK(capture_count(&c, THREADMON__FRAME__BODY_GOODBYE) == 0);
  CHECK(capture_count(&c, THREADMON__FRAME__BODY_TICK) >= 10);
  capture_free(&c);
  printf("ok killed: capture readable to its last frame\n");
}

/* The child's own capture: out.<childpid>.tmcap, with parent_pid. */
static void test_fork(bool follow) {
  char out[512], env_out[600];
  path_in_dir(out, sizeof out, follow ? "fork.tmcap" : "nofollow.tmcap");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "fork", NULL};
  char *env[] = {env_out, follow ? "THREADMON_FOLLOW=1" : "THREADMON_FOLLOW=0", NULL};
  int status = run(argv, env, 5000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  capture parent;
  CHECK(capture_load(out, &parent) == 0);
  const Threadmon__Hello *ph = check_stream_start(&parent);
  CHECK_EQ(parent.frames[parent.n - 1]->body_case, THREADMON__FRAME__BODY_GOODBYE);

  /* Find the child's file by its prefix. */
  const char *prefix = follow ? "fork." : "nofollow.";
  DIR *d = opendir(dir);
  struct dirent *e;
  char child_path[800] = "";
  while ((e = readdir(d)))
    if (!strncmp(e->d_name, prefix, strlen(prefix)) &&
        strcmp(e->d_name + strlen(prefix), "tmcap"))
      snprintf(child_path, sizeof child_path, "%s/%s", dir, e->d_name);
  closedir(d);
  if (!follow) {
    CHECK(child_path[0] == 0);
    capture_free(&parent);
    printf("ok fork with THREADMON_FOLLOW=0: child not probed\n");
    return;
  }
  CHECK(child_path[0] != 0);
  capture child;
  CHECK(capture_load(child_path, &child) == 0);
  const Threadmon__Hello *ch = check_stream_start(&child);
  CHECK_EQ(ch->parent_pid, ph->pid);
  CHECK(ch->pid != ph->pid);
  char expect[64];
  snprintf(expect, sizeof expect, "fork.%u.tmcap", ch->pid);
  CHECK(strstr(child_path, expect) != NULL);
  CHECK(ch->session_id != ph->session_id);
  const Threadmon__Frame *last = child.frames[child.n - 1];
  CHECK_EQ(last->body_case, THREADMON__FRAME__BODY_GOODBYE);
  CHECK_EQ(last->goodbye->exit_status, 0);
  /* The child's workers are in the child's capture, its main is the forker. */
  size_t starts = 0;
  for (size_t i = 0; i < child.n; i++)
    if (child.frames[i]->body_case == THREADMON__FRAME__BODY_THREAD_START) {
      starts++;
      if (child.frames[i]->thread_start->is_main)
        CHECK_EQ(child.frames[i]->thread_start->tid, ch->pid);
    }
  CHECK(starts >= 6);
  capture_free(&child);
  capture_free(&parent);
  unlink(child_path);
  printf("ok fork: child capture %s\n", child_path);
}

static void test_exec(void) {
  char out[512], env_out[600];
  path_in_dir(out, sizeof out, "exec.tmcap");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "exec", (char *)workload, NULL};
  char *env[] = {env_out, NULL};
  pid_t pid = run_probed(probe, argv, env);
  int status = wait_for(pid, 5000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 5);
  capture before;
  CHECK(capture_load(out, &before) == 0);
  check_stream_start(&before);
  const Threadmon__Frame *last = before.frames[before.n - 1];
  CHECK_EQ(last->body_case, THREADMON__FRAME__BODY_GOODBYE);
  CHECK_EQ(last->goodbye->reason, THREADMON__END_REASON__END_EXEC);
  char after_path[600];
  snprintf(after_path, sizeof after_path, "%s/exec.%d-exec1.tmcap", dir, (int)pid);
  capture after;
  CHECK(capture_load(after_path, &after) == 0);
  const Threadmon__Hello *h = check_stream_start(&after);
  CHECK_EQ(h->pid, (uint32_t)pid);
  CHECK(h->n_argv == 4 && !strcmp(h->argv[1], "contend"));
  last = after.frames[after.n - 1];
  CHECK_EQ(last->body_case, THREADMON__FRAME__BODY_GOODBYE);
  CHECK_EQ(last->goodbye->exit_status, 5);
  capture_free(&before);
  capture_free(&after);
  unlink(after_path);
  printf("ok exec: Goodbye(END_EXEC), then the new image's own session\n");
}

/* Refused and unroutable peers: the program runs and exits as usual. */
static void test_unreachable(const char *target) {
  char out[512], env_out[600], env_conn[128];
  path_in_dir(out, sizeof out, "unreachable.tmcap");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  snprintf(env_conn, sizeof env_conn, "THREADMON_CONNECT=%s", target);
  char *argv[] = {(char *)workload, "contend", "200", "0", NULL};
  char *env[] = {env_out, env_conn, NULL};
  uint64_t t0 = now_ms();
  int status = run(argv, env, 4000);
  uint64_t took = now_ms() - t0;
  CHECK(status != -1);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(took < 2500);
  capture c;
  CHECK(capture_load(out, &c) == 0);
  check_stream_start(&c);
  CHECK_EQ(c.frames[c.n - 1]->body_case, THREADMON__FRAME__BODY_GOODBYE);
  capture_free(&c);
  printf("ok unreachable %s: exited normally in %llu ms\n", target, (unsigned long long)took);
}

/* A bad setting: one line on stderr, the program runs unprobed. */
static void test_bad_setting(void) {
  char out[512], env_out[600], err_path[600];
  path_in_dir(out, sizeof out, "bad.tmcap");
  snprintf(err_path, sizeof err_path, "%s/bad.stderr", dir);
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "contend", "20", "4", NULL};
  char *env[] = {env_out, "THREADMON_INTERVAL_MS=fast", NULL};
  fflush(stdout);
  int saved = dup(2);
  int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 2);
  close(fd);
  int status = run(argv, env, 3000);
  dup2(saved, 2);
  close(saved);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 4);
  CHECK(access(out, F_OK) != 0);
  FILE *f = fopen(err_path, "r");
  char line[256] = "";
  CHECK(f && fgets(line, sizeof line, f));
  fclose(f);
  CHECK(!strncmp(line, "threadmon: THREADMON_INTERVAL_MS=\"fast\"", 39));
  printf("ok bad setting: %s", line);
}

/* THREADMON_MAX_SWITCH_RATE: two threads yielding on one CPU switch far
 * more often than 2,000 times a second: a batch says the records pause, a
 * notice says why, and no records follow until a notice says they resumed
 * (a second later at the earliest). With 0 (no limit) they go on. */
static void test_switch_limit(void) {
  for (int limit = 0; limit < 2; limit++) {
    char out[512], env_out[600];
    path_in_dir(out, sizeof out, limit ? "switch-limit.tmcap" : "switch-nolimit.tmcap");
    snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
    char *argv[] = {(char *)workload, "yield", "120", NULL};
    char *env[] = {env_out, limit ? "THREADMON_MAX_SWITCH_RATE=2000" : "THREADMON_MAX_SWITCH_RATE=0",
                   NULL};
    int status = run(argv, env, 5000);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    capture c;
    CHECK(capture_load(out, &c) == 0);
    const Threadmon__Hello *h = check_stream_start(&c);
    if (!has_source(h, THREADMON__SOURCE__SOURCE_PERF_SWITCH)) {
      printf("switch limit: no switch records here\n");
      return;
    }
    size_t stopped_at = 0, pauses = 0, notices = 0, records_while_paused = 0;
    bool paused = false;
    for (size_t i = 0; i < c.n; i++) {
      const Threadmon__Frame *f = c.frames[i];
      if (f->body_case == THREADMON__FRAME__BODY_SWITCHES) {
        if (paused && f->switches->n_tid) records_while_paused++;
        if (f->switches->stopped) {
          if (!stopped_at) stopped_at = i;
          pauses++;
          paused = true;
        }
      }
      if (f->body_case == THREADMON__FRAME__BODY_NOTICE) {
        if (strstr(f->notice->text, "switch records paused")) notices++;
        if (strstr(f->notice->text, "switch records resumed")) paused = false;
      }
    }
    printf("switch limit %d: paused at frame %zu of %zu, %zu pauses\n", limit, stopped_at, c.n,
           pauses);
    CHECK_EQ(stopped_at != 0, limit == 1);
    CHECK_EQ(notices, pauses);
    CHECK_EQ(records_while_paused, 0);
  }
}

/* The same limit over a longer run: at the end of the first pause (1 s)
 * records come back from both yielding threads, which existed before it
 * (a pause of a program with few threads closes the events, and their
 * resume opens them again on every thread alive). */
static void test_switch_resume(void) {
  char out[512], env_out[600];
  path_in_dir(out, sizeof out, "switch-resume.tmcap");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "yield", "1400", NULL};
  char *env[] = {env_out, "THREADMON_MAX_SWITCH_RATE=2000", NULL};
  int status = run(argv, env, 10000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  capture c;
  CHECK(capture_load(out, &c) == 0);
  const Threadmon__Hello *h = check_stream_start(&c);
  if (!has_source(h, THREADMON__SOURCE__SOURCE_PERF_SWITCH)) {
    printf("switch resume: no switch records here\n");
    capture_free(&c);
    return;
  }
  uint32_t before[8] = {0}, after[8] = {0};
  size_t n_before = 0, n_after = 0;
  bool paused = false, resumed = false;
  for (size_t i = 0; i < c.n; i++) {
    const Threadmon__Frame *f = c.frames[i];
    if (f->body_case == THREADMON__FRAME__BODY_NOTICE) {
      if (strstr(f->notice->text, "switch records paused")) paused = true;
      if (paused && strstr(f->notice->text, "switch records resumed")) resumed = true;
    }
    if (f->body_case != THREADMON__FRAME__BODY_SWITCHES) continue;
    uint32_t *seen = resumed ? after : before;
    size_t *n = resumed ? &n_after : &n_before;
    for (size_t j = 0; j < f->switches->n_tid; j++) {
      uint32_t tid = f->switches->tid[j];
      if (tid == h->probe_tid) continue;
      size_t k = 0;
      while (k < *n && seen[k] != tid) k++;
      if (k == *n && *n < 8) seen[(*n)++] = tid;
    }
  }
  size_t again = 0; /* threads with records before the pause and after it */
  for (size_t k = 0; k < n_after; k++)
    for (size_t l = 0; l < n_before; l++) again += after[k] == before[l];
  printf("switch resume: %zu threads with records before the pause, %zu after it, %zu both\n",
         n_before, n_after, again);
  CHECK(resumed);
  CHECK(again >= 2);
  capture_free(&c);
}

/* A thread created while its creator keeps their one CPU: its life starts
 * at pthread_create (ThreadStart between the creator's clock reads around
 * the call), and its first RUNNING transition when it first ran. */
static void test_late_first_run(void) {
  char out[512], env_out[600], times[512];
  path_in_dir(out, sizeof out, "late.tmcap");
  path_in_dir(times, sizeof times, "late.times");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "late", "60", times, NULL};
  char *env[] = {env_out, NULL};
  int status = run(argv, env, 5000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  unsigned long long before = 0, after = 0, first = 0;
  int tid = 0;
  FILE *f = fopen(times, "r");
  CHECK(f != NULL);
  CHECK_EQ(fscanf(f, "%llu %llu %llu %d", &before, &after, &first, &tid), 4);
  fclose(f);
  capture c;
  CHECK(capture_load(out, &c) == 0);
  check_stream_start(&c);
  const Threadmon__ThreadStart *start = NULL;
  for (size_t i = 0; i < c.n; i++)
    if (c.frames[i]->body_case == THREADMON__FRAME__BODY_THREAD_START &&
        c.frames[i]->thread_start->tid == (uint32_t)tid)
      start = c.frames[i]->thread_start;
  CHECK(start != NULL);
  CHECK(start->time_ns >= before && start->time_ns <= after);
  uint64_t running = 0; /* its first transition: RUNNING, as it first ran */
  for (size_t i = 0; i < c.n && !running; i++) {
    if (c.frames[i]->body_case != THREADMON__FRAME__BODY_TRANSITIONS) continue;
    const Threadmon__Transitions *tr = c.frames[i]->transitions;
    uint64_t time = tr->base_ns;
    for (size_t j = 0; j < tr->n_tid && !running; j++) {
      time += (uint64_t)tr->delta_ns[j];
      if (tr->tid[j] == (uint32_t)tid) {
        CHECK_EQ(tr->state[j], THREADMON__THREAD_STATE__STATE_RUNNING);
        running = time;
      }
    }
  }
  CHECK(running >= start->time_ns && running <= first);
  printf("late first run: first ran %.2f ms after its create (its own clock: %.2f ms)\n",
         (double)(running - start->time_ns) / 1e6, (double)(first - start->time_ns) / 1e6);
  capture_free(&c);
}

/* Threads that never set their attributes but inherit non-default ones
 * (SCHED_BATCH, nice 4, CPU 0 from their creator; CPU 0 from an attr):
 * the stream says so in a ThreadAttr at their start, for a capture as for
 * a live display. */
static void test_inherited_attrs(void) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    printf("inherited attrs: one CPU, CPU 0 is every CPU: skipped\n");
    return;
  }
  char out[512], env_out[600], tids_file[512];
  path_in_dir(out, sizeof out, "inherit.tmcap");
  path_in_dir(tids_file, sizeof tids_file, "inherit.tids");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "inherit", tids_file, NULL};
  char *env[] = {env_out, NULL};
  int status = run(argv, env, 5000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  int tids[2] = {0, 0};
  FILE *f = fopen(tids_file, "r");
  CHECK(f != NULL);
  CHECK_EQ(fscanf(f, "%d %d", &tids[0], &tids[1]), 2);
  fclose(f);
  capture c;
  CHECK(capture_load(out, &c) == 0);
  check_stream_start(&c);
  for (int k = 0; k < 2; k++) {
    const Threadmon__ThreadStart *start = NULL;
    const Threadmon__ThreadAttr *attr = NULL;
    for (size_t i = 0; i < c.n; i++) {
      const Threadmon__Frame *fr = c.frames[i];
      if (fr->body_case == THREADMON__FRAME__BODY_THREAD_START &&
          fr->thread_start->tid == (uint32_t)tids[k] && !start)
        start = fr->thread_start;
      if (fr->body_case == THREADMON__FRAME__BODY_THREAD_ATTR &&
          fr->thread_attr->tid == (uint32_t)tids[k] && !attr)
        attr = fr->thread_attr;
    }
    CHECK(start != NULL);
    CHECK(attr != NULL);
    CHECK_EQ(attr->time_ns, start->time_ns); /* what it started with */
    CHECK_EQ(attr->policy, SCHED_BATCH);
    CHECK_EQ(attr->nice, 4);
    CHECK_EQ(attr->n_affinity, 1);
    CHECK_EQ(attr->affinity[0], 1);
  }
  capture_free(&c);
}

/* THREADMON_COUNTERS=1: the busy workers' samples carry their task clock. */
static void test_counters(void) {
  char out[512], env_out[600];
  path_in_dir(out, sizeof out, "counters.tmcap");
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, "contend", "300", "0", NULL};
  char *env[] = {env_out, "THREADMON_COUNTERS=1", NULL};
  int status = run(argv, env, 5000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  capture c;
  CHECK(capture_load(out, &c) == 0);
  const Threadmon__Hello *h = check_stream_start(&c);
  if (!has_source(h, THREADMON__SOURCE__SOURCE_PERF_SOFTWARE)) {
    /* perf_event_paranoid refuses them: a notice must say so. */
    CHECK(capture_count(&c, THREADMON__FRAME__BODY_NOTICE) > 0);
    printf("counters: software perf counters unavailable here\n");
    return;
  }
  /* A thread's counters are opened on its 8th read that finds it ran, once
   * it has used 20 ms of CPU (sampler.c, PERF_EVERY): on a loaded machine a
   * worker may never get there, and then no counter is owed. */
  uint64_t max_task_clock = 0;
  enum { MAX_TIDS = 64 };
  uint32_t tids[MAX_TIDS] = {0}, reads[MAX_TIDS] = {0};
  bool owed = false;
  for (size_t i = 0; i < c.n; i++) {
    if (c.frames[i]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *k = c.frames[i]->tick;
    for (size_t j = 0; j < k->n_lwps; j++) {
      const Threadmon__LwpSample *l = k->lwps[j];
      if (l->task_clock_ns > max_task_clock) max_task_clock = l->task_clock_ns;
      if (l->oncpu_ns < 20000000u) continue;
      for (int m = 0; m < MAX_TIDS; m++) {
        if (tids[m] != 0 && tids[m] != l->tid) continue;
        tids[m] = l->tid;
        if (++reads[m] >= 3 * 8) owed = true; /* opened by the 2nd 8th, read by the 3rd */
        break;
      }
    }
  }
  if (!owed) {
    printf("counters: no worker was read 24 times past 20 ms of CPU (machine busy): none owed\n");
    return;
  }
  CHECK(max_task_clock > 0);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PROBE WORKLOAD TMPDIR\n", argv[0]);
    return 2;
  }
  probe = argv[1];
  workload = argv[2];
  dir = argv[3];
  mkdir(dir, 0755);
  const char *only = getenv("TEST_ONLY");
  if (!only || strstr(only, "clean")) test_clean_exit();
  if (!only || strstr(only, "counters")) test_counters();
  if (!only || strstr(only, "switch_limit")) test_switch_limit();
  if (!only || strstr(only, "switch_resume")) test_switch_resume();
  if (!only || strstr(only, "late")) test_late_first_run();
  if (!only || strstr(only, "inherit")) test_inherited_attrs();
  if (!only || strstr(only, "killed")) test_killed();
  if (!only || strstr(only, "fork")) test_fork(true);
  if (!only || strstr(only, "nofollow")) test_fork(false);
  if (!only || strstr(only, "exec")) test_exec();
  if (!only || strstr(only, "unreachable")) {
    test_unreachable("127.0.0.1:1");
    test_unreachable("192.0.2.1:9");
  }
  if (!only || strstr(only, "bad")) test_bad_setting();
  return 0;
}
