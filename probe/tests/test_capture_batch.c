/* The capture file's batching (transport.c): a tick's frames are gathered
 * and written together about every 50 ms; order always holds, closing
 * writes what was gathered, and a fork child's abandon never writes the
 * parent's frames. A file that cannot take a write (RLIMIT_FSIZE here, as
 * a full disk) opens a gap whose time, bytes and cause are counted for the
 * launcher's line, and closes with the resync. A frame too large to gather
 * (a tick's counters for tens of thousands of objects) is written alone,
 * and what the tick gathers after it keeps the index's times in order. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tm_check.h"
#include "tmblock.h"
#include "tmwire.h"
#include "transport.h"

#define MS 1000000ull

static char path[256];

static size_t file_size(void) {
  struct stat st;
  CHECK(stat(path, &st) == 0);
  return (size_t)st.st_size;
}

/* The file after the header must be exactly `want`. */
static void check_body(const char *want) {
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  char buf[256] = {0};
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  CHECK(n >= TM_HEADER_BYTES);
  if (strcmp(buf + TM_HEADER_BYTES, want) != 0) {
    fprintf(stderr, "body '%s', want '%s'\n", buf + TM_HEADER_BYTES, want);
    exit(1);
  }
}

static void send_frame(tm_transport *t, const char *frame) {
  tm_transport_send(t, (const uint8_t *)frame, strlen(frame), TM_TO_FILE);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_loss_counted(void) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl;
  CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
  tm_transport t;
  tm_transport_init(&t);
  CHECK(tm_transport_open_file(&t, path) == 0);
  tm_file_loss l;
  CHECK(!tm_transport_file_loss(&t, now_ns(), &l));
  send_frame(&t, "ab");
  /* Room for 4 more bytes: a 10-byte frame is cut, cut back, and lost. */
  struct rlimit small = {file_size() + 4, rl.rlim_max};
  CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
  send_frame(&t, "0123456789");
  send_frame(&t, "lost too");
  check_body("ab");
  struct timespec pause = {0, 20 * (long)MS};
  nanosleep(&pause, NULL);
  CHECK(tm_transport_file_loss(&t, now_ns(), &l));
  CHECK_EQ(l.first_errno, EFBIG);
  CHECK_EQ(l.bytes, 18);
  CHECK(l.lost_ns >= 20 * MS); /* still open: counted to now */
  /* Space again: the resync (here one frame) closes the gap. */
  CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
  uint64_t now = now_ns();
  tm_transport_batch_begin(&t, now);
  CHECK(tm_transport_file_wants_resync(&t, now, true));
  tm_transport_file_resync_queued(&t);
  send_frame(&t, "R");
  tm_transport_batch_end(&t, now, true);
  check_body("abR");
  CHECK_EQ(t.file_gaps, 1u);
  nanosleep(&pause, NULL);
  uint64_t closed = t.file_lost_ns;
  CHECK(closed >= 20 * MS);
  CHECK(tm_transport_file_loss(&t, now_ns(), &l));
  CHECK_EQ(l.lost_ns, closed); /* closed: no longer growing */
  CHECK_EQ(l.bytes, 18);
  tm_transport_close(&t);
  unlink(path);
}

/* A tick whose first frame is over the batch's limit: it goes out plain at
 * once, and the block gathered after it must not claim the tick's earlier
 * start (the reader refused such an index as damaged). */
static void test_large_frame_keeps_index_order(void) {
  tm_transport t;
  tm_transport_init(&t);
  t.compress_level = 1;
  CHECK(tm_transport_open_file(&t, path) == 0);
  enum { BIG = (1u << 20) + 16 };
  uint8_t *big = malloc(BIG);
  CHECK(big != NULL);
  memset(big, 'x', BIG);
  struct timespec pause = {0, 2 * (long)MS};
  for (int tick = 0; tick < 3; tick++) {
    tm_transport_batch_begin(&t, now_ns());
    nanosleep(&pause, NULL);
    tm_transport_send(&t, big, BIG, TM_TO_FILE);
    nanosleep(&pause, NULL);
    for (int i = 0; i < 64; i++) send_frame(&t, "gathered after the large frame, compressible");
    tm_transport_batch_end(&t, now_ns(), true);
  }
  free(big);
  tm_transport_close(&t);
  int fd = open(path, O_RDONLY);
  CHECK(fd >= 0);
  tm_index x = {0};
  int from_tail = 0;
  char err[200] = "";
  CHECK(tm_capture_index(fd, file_size(), &x, &from_tail, err, sizeof err) == 0);
  if (err[0]) fprintf(stderr, "index refused: %s\n", err);
  CHECK(from_tail == 1 && err[0] == 0);
  CHECK(x.n >= 6);
  for (size_t i = 1; i < x.n; i++) CHECK(x.e[i].first_ns >= x.e[i - 1].first_ns);
  tm_index_free(&x);
  close(fd);
  unlink(path);
}

int main(void) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/test_capture_batch.%d", dir && dir[0] ? dir : "/tmp",
           (int)getpid());
  tm_transport t;
  tm_transport_init(&t);
  CHECK(tm_transport_open_file(&t, path) == 0);
  CHECK_EQ(file_size(), (size_t)TM_HEADER_BYTES);

  /* Two ticks 10 ms apart: gathered, nothing written yet. */
  tm_transport_batch_begin(&t, 0);
  send_frame(&t, "a");
  send_frame(&t, "b");
  tm_transport_batch_end(&t, 1 * MS, false);
  tm_transport_batch_begin(&t, 10 * MS);
  send_frame(&t, "c");
  tm_transport_batch_end(&t, 11 * MS, false);
  CHECK_EQ(file_size(), (size_t)TM_HEADER_BYTES);
  /* 50 ms after the first gathered frame: all of it, in order. */
  tm_transport_batch_begin(&t, 50 * MS);
  send_frame(&t, "d");
  tm_transport_batch_end(&t, 51 * MS, false);
  check_body("abcd");

  /* A frame outside a batch goes after what was gathered. */
  tm_transport_batch_begin(&t, 60 * MS);
  send_frame(&t, "e");
  tm_transport_batch_end(&t, 61 * MS, false);
  check_body("abcd");
  send_frame(&t, "f");
  check_body("abcdef");

  /* Forced (the final tick) writes at once. */
  tm_transport_batch_begin(&t, 70 * MS);
  send_frame(&t, "g");
  tm_transport_batch_end(&t, 71 * MS, true);
  check_body("abcdefg");

  /* Closing writes what was gathered. */
  tm_transport_batch_begin(&t, 80 * MS);
  send_frame(&t, "h");
  tm_transport_batch_end(&t, 81 * MS, false);
  tm_transport_close(&t);
  check_body("abcdefgh");

  /* A fork child abandons the parent's gathered frames unwritten. */
  tm_transport_init(&t);
  CHECK(tm_transport_open_file(&t, path) == 0);
  tm_transport_batch_begin(&t, 0);
  send_frame(&t, "x");
  tm_transport_batch_end(&t, 1 * MS, false);
  tm_transport_abandon(&t);
  check_body("");
  unlink(path);
  test_loss_counted();
  test_large_frame_keeps_index_order();
  puts("capture batching: ok");
  return 0;
}
