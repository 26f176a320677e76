// SQLite from several threads: writers insert into one table of a shared
// in-memory database (SQLite's serialized mode: one connection, guarded by
// SQLite's own mutex), readers run aggregate queries on it, and every
// thread also uses a private connection to a private database (no
// sharing). Prints its truth as one JSON line.
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static sqlite3 *shared_db;
static double seconds = 1.5;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void must(int rc, sqlite3 *db, const char *what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
  }
}

struct worker {
  pthread_t thread;
  int id, writer;
  long ops;
};

static void *run_worker(void *arg) {
  struct worker *w = arg;
  char name[16];
  snprintf(name, sizeof name, "%s-%d", w->writer ? "sql-writer" : "sql-reader", w->id);
  pthread_setname_np(pthread_self(), name);
  sqlite3 *own;
  must(sqlite3_open(":memory:", &own), own, "open private");
  must(sqlite3_exec(own, "CREATE TABLE t(k INTEGER, v TEXT)", 0, 0, 0), own, "create private");
  sqlite3_stmt *ins, *sel, *own_ins;
  must(sqlite3_prepare_v2(shared_db, "INSERT INTO kv(k, v) VALUES(?, hex(randomblob(32)))", -1,
                          &ins, 0), shared_db, "prepare insert");
  must(sqlite3_prepare_v2(shared_db, "SELECT count(*), sum(length(v)) FROM kv WHERE k % 7 = ?",
                          -1, &sel, 0), shared_db, "prepare select");
  must(sqlite3_prepare_v2(own, "INSERT INTO t VALUES(?, 'x')", -1, &own_ins, 0), own, "prepare own");
  double end = now() + seconds;
  while (now() < end) {
    sqlite3_stmt *s = w->writer ? ins : sel;
    sqlite3_bind_int64(s, 1, w->ops % 1000);
    while (sqlite3_step(s) == SQLITE_ROW) {
    }
    sqlite3_reset(s);
    sqlite3_bind_int64(own_ins, 1, w->ops);
    sqlite3_step(own_ins);
    sqlite3_reset(own_ins);
    w->ops++;
  }
  sqlite3_finalize(ins);
  sqlite3_finalize(sel);
  sqlite3_finalize(own_ins);
  sqlite3_close(own);
  return NULL;
}

int main(int argc, char **argv) {
  int writers = argc > 1 ? atoi(argv[1]) : 2, readers = argc > 2 ? atoi(argv[2]) : 2;
  if (argc > 3) seconds = atof(argv[3]);
  if (writers + readers > 32) return 2;
  if (!sqlite3_threadsafe()) {
    fprintf(stderr, "libsqlite3 built without threads\n");
    return 3;
  }
  must(sqlite3_open_v2(":memory:", &shared_db,
                       SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, 0),
       shared_db, "open shared");
  must(sqlite3_exec(shared_db, "CREATE TABLE kv(k INTEGER, v TEXT)", 0, 0, 0), shared_db, "create");
  struct worker ws[32];
  for (int i = 0; i < writers + readers; i++) {
    ws[i] = (struct worker){.id = i, .writer = i < writers};
    pthread_create(&ws[i].thread, NULL, run_worker, &ws[i]);
  }
  long writes = 0, reads = 0;
  for (int i = 0; i < writers + readers; i++) {
    pthread_join(ws[i].thread, NULL);
    if (ws[i].writer) writes += ws[i].ops;
    else reads += ws[i].ops;
  }
  sqlite3_close(shared_db);
  printf("{\"writers\": %d, \"readers\": %d, \"writes\": %ld, \"reads\": %ld}\n", writers,
         readers, writes, reads);
  return 0;
}
