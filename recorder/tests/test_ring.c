/* The flight recorder's ring on a stream built here, without the UI: what
 * it writes is a capture that decodes whole, with the descriptions, every
 * tick of the last window, one tick a second before it, and a baseline
 * whose counters are those of the newest tick it let go; it ends with the
 * Goodbye, or a note saying there was none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../probe/tests/tm_check.h"
#include "ring.h"
#include "tmwire.h"


#define MS 1000000ull
#define START (1000 * MS)
#define STEP (100 * MS)
#define TICKS 60 /* 6 s */

static void take(fr_ring *r, Threadmon__Frame *f) {
  size_t n = protobuf_c_message_get_packed_size(&f->base);
  uint8_t *p = malloc(n ? n : 1);
  protobuf_c_message_pack(&f->base, p);
  fr_ring_take(r, p, (uint32_t)n, f);
  free(p);
}

/* Feeds Hello, a mutex, TICKS ticks (tick i at START + (i + 1) * STEP, the
 * mutex's contentions i + 1) and, if goodbye, a Goodbye. */
static void feed(fr_ring *r, bool goodbye) {
  Threadmon__Hello h = THREADMON__HELLO__INIT;
  h.protocol_version = TM_PROTOCOL_VERSION;
  h.start_monotonic_ns = START;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_HELLO;
  f.hello = &h;
  take(r, &f);
  Threadmon__SyncObject o = THREADMON__SYNC_OBJECT__INIT;
  o.id = 5;
  o.kind = THREADMON__SYNC_KIND__KIND_MUTEX;
  f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
  f.sync_object = &o;
  take(r, &f);
  for (uint64_t i = 0; i < TICKS; i++) {
    Threadmon__SyncStats s = THREADMON__SYNC_STATS__INIT;
    s.id = 5;
    s.contentions = i + 1;
    Threadmon__SyncStats *ps = &s;
    Threadmon__Tick k = THREADMON__TICK__INIT;
    k.seq = i + 1;
    k.time_ns = START + (i + 1) * STEP;
    k.n_sync = 1;
    k.sync = &ps;
    f.body_case = THREADMON__FRAME__BODY_TICK;
    f.tick = &k;
    take(r, &f);
  }
  if (goodbye) {
    Threadmon__Goodbye g = THREADMON__GOODBYE__INIT;
    f.body_case = THREADMON__FRAME__BODY_GOODBYE;
    f.goodbye = &g;
    take(r, &f);
  }
}

/* The file's bytes fed to d (initialised here); false if it cannot be read. */
static bool decode_file(const char *path, tm_decoder *d) {
  FILE *in = fopen(path, "rb");
  if (!in) return false;
  tm_decoder_init(d);
  uint8_t buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) tm_decoder_feed(d, buf, n);
  fclose(in);
  return true;
}

static void check_capture(const char *path, bool goodbye) {
  tm_decoder d;
  bool read = decode_file(path, &d);
  CHECKF(read, "%s not written", path);
  if (!read) return;
  const uint8_t *payload;
  uint32_t len;
  int frames = 0, objects = 0, ticks = 0, in_window = 0, dropped_note = 0;
  uint64_t newest = START + TICKS * STEP, last_tick = 0;
  Threadmon__Frame__BodyCase first = 0, last = 0;
  while (tm_decoder_next(&d, &payload, &len) == TM_DECODE_FRAME) {
    Threadmon__Frame *f = threadmon__frame__unpack(NULL, len, payload);
    CHECKF(f, "frame %d does not unpack", frames);
    if (!f) break;
    if (!frames++) first = f->body_case;
    last = f->body_case;
    if (f->body_case == THREADMON__FRAME__BODY_SYNC_OBJECT) objects++;
    if (f->body_case == THREADMON__FRAME__BODY_NOTICE) {
      if (strstr(f->notice->text, "detail kept for the last 1 s only")) dropped_note++;
      else
        CHECKF(!goodbye && strstr(f->notice->text, "without the program's Goodbye"), "notice: %s",
              f->notice->text);
    }
    if (f->body_case == THREADMON__FRAME__BODY_TICK) {
      const Threadmon__Tick *k = f->tick;
      ticks++;
      CHECKF(k->time_ns > last_tick, "tick at %llu after %llu", (unsigned long long)k->time_ns,
            (unsigned long long)last_tick);
      last_tick = k->time_ns;
      if (k->time_ns + 2000 * MS > newest) in_window++;
      /* Every tick, the baseline too, carries the counters of its time. */
      uint64_t want = (k->time_ns - START) / STEP;
      CHECKF(k->n_sync == 1 && k->sync[0]->contentions == want,
            "tick at %llu: %zu objects, contentions %llu, want %llu",
            (unsigned long long)k->time_ns, k->n_sync,
            k->n_sync ? (unsigned long long)k->sync[0]->contentions : 0ull,
            (unsigned long long)want);
    }
    threadmon__frame__free_unpacked(f, NULL);
  }
  CHECKF(!*tm_decoder_error(&d) && !tm_decoder_pending(&d), "decoder: %s, %zu bytes left",
        tm_decoder_error(&d), tm_decoder_pending(&d));
  tm_decoder_free(&d);
  CHECKF(first == THREADMON__FRAME__BODY_HELLO, "first frame %d", first);
  CHECKF(objects == 1, "%d sync objects", objects);
  CHECKF(dropped_note == 1, "%d notes of the detail dropped", dropped_note);
  CHECKF(last == (goodbye ? THREADMON__FRAME__BODY_GOODBYE : THREADMON__FRAME__BODY_NOTICE),
        "last frame %d", last);
  CHECKF(last_tick == newest, "newest tick %llu", (unsigned long long)last_tick);
  /* The window (1 s, plus at most two chunks of 125 ms) whole... */
  CHECKF(in_window >= 10, "%d ticks in the last 2 s", in_window);
  /* ...and of the 4 s before it, a tick a second and the baseline. */
  CHECKF(ticks < in_window + 8 && ticks > in_window, "%d ticks, %d in the window", ticks,
        in_window);
}

/* The capture's last frame, a Goodbye: its reason and status; the notice
 * before it is counted in notes. False if the last frame is no Goodbye. */
static bool last_goodbye(const char *path, int *reason, int *status, int *notes) {
  tm_decoder d;
  if (!decode_file(path, &d)) return false;
  const uint8_t *payload;
  uint32_t len;
  bool goodbye = false;
  *notes = 0;
  while (tm_decoder_next(&d, &payload, &len) == TM_DECODE_FRAME) {
    Threadmon__Frame *f = threadmon__frame__unpack(NULL, len, payload);
    if (!f) break;
    goodbye = f->body_case == THREADMON__FRAME__BODY_GOODBYE;
    if (goodbye) {
      *reason = f->goodbye->reason;
      *status = f->goodbye->exit_status;
    }
    if (f->body_case == THREADMON__FRAME__BODY_NOTICE &&
        strstr(f->notice->text, "as the launcher saw it"))
      (*notes)++;
    threadmon__frame__free_unpacked(f, NULL);
  }
  tm_decoder_free(&d);
  return goodbye;
}

/* The end the launcher saw goes in when the probe sent none (a program
 * killed outright); a Goodbye from the probe stands. */
static void check_set_end(const char *dir) {
  char path[256];
  for (int probe_said = 0; probe_said < 2; probe_said++) {
    fr_ring r;
    fr_ring_init(&r, 1000 * MS);
    feed(&r, probe_said);
    fr_ring_set_end(&r, THREADMON__END_REASON__END_SIGNAL, 9);
    snprintf(path, sizeof path, "%s/end%d.tmcap", dir, probe_said);
    CHECKF(fr_ring_write(&r, path, "test") == 0, "write %s", path);
    fr_ring_free(&r);
    int reason = -1, status = -1, notes = 0;
    CHECKF(last_goodbye(path, &reason, &status, &notes), "%s ends without a Goodbye", path);
    if (probe_said)
      CHECKF(reason == 0 && status == 0 && notes == 0, "the probe's Goodbye replaced: %d %d %d",
             reason, status, notes);
    else
      CHECKF(reason == THREADMON__END_REASON__END_SIGNAL && status == 9 && notes == 1,
             "the launcher's end: reason %d, status %d, %d notes", reason, status, notes);
    unlink(path);
  }
}

/* A trigger's hold keeps the detail from its moment on however far the
 * stream runs past the window; released, the ring is the window again. */
static void check_hold(void) {
  fr_ring r;
  fr_ring_init(&r, 1000 * MS);
  const uint64_t from = START + 1500 * MS;
  fr_ring_hold(&r, from);
  fr_ring_hold(&r, START + 2500 * MS); /* a later trigger's: the earlier stands */
  feed(&r, false);
  CHECKF(r.n_chunks && r.chunks[0].first_ns <= from && r.chunks[0].last_ns >= from,
         "held from %llu, oldest chunk [%llu, %llu]", (unsigned long long)from,
         r.n_chunks ? (unsigned long long)r.chunks[0].first_ns : 0ull,
         r.n_chunks ? (unsigned long long)r.chunks[0].last_ns : 0ull);
  fr_ring_release(&r);
  CHECKF(r.chunks[0].first_ns <= from, "released once of twice: the hold stays");
  fr_ring_release(&r);
  CHECKF(r.n_chunks && r.now_ns - r.chunks[0].last_ns <= 1000 * MS,
         "released, the oldest chunk ends %llu ns before the newest tick",
         r.n_chunks ? (unsigned long long)(r.now_ns - r.chunks[0].last_ns) : 0ull);
  fr_ring_free(&r);
}

int main(void) {
  check_hold();
  char dir[] = "/tmp/test-flight-ring-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char path[256];
  for (int goodbye = 0; goodbye < 2; goodbye++) {
    fr_ring r;
    fr_ring_init(&r, 1000 * MS);
    feed(&r, goodbye);
    snprintf(path, sizeof path, "%s/last%d.tmcap", dir, goodbye);
    CHECKF(fr_ring_write(&r, path, "test") == 0, "write %s", path);
    CHECKF(!r.oom, "out of memory");
    fr_ring_free(&r);
    check_capture(path, goodbye);
    unlink(path);
  }
  check_set_end(dir);
  rmdir(dir);
  printf("ring: ok\n");
  return 0;
}
