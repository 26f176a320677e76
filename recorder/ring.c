#include "ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmcreate.h"
#include "tmnotices.h"
#include "tmwire.h"

#define CHUNK_BYTES (256u * 1024u)
/* A chunk spans an eighth of the window (50 ms to 1 s): the window kept is
 * between N s and N s plus two chunks. */
#define CHUNK_NS(r)                                     \
  ((r)->window_ns / 8 < 50000000ull     ? 50000000ull   \
   : (r)->window_ns / 8 > 1000000000ull ? 1000000000ull \
                                        : (r)->window_ns / 8)
#define LEVEL 3
#define HISTORY_NS 1000000000ull /* a dropped tick kept a second */

static int bytes_add(fr_bytes *b, const void *p, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    uint8_t *q = realloc(b->p, cap);
    if (!q) return -1;
    b->p = q;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
  return 0;
}

static void bytes_free(fr_bytes *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

static void add_frame(fr_ring *r, fr_bytes *b, const uint8_t *payload, uint32_t len) {
  uint8_t prefix[TM_FRAME_PREFIX_BYTES];
  tm_frame_prefix_encode(prefix, payload, len);
  if (bytes_add(b, prefix, sizeof prefix) || bytes_add(b, payload, len)) r->oom = true;
}

static void pack_frame(fr_ring *r, fr_bytes *b, const Threadmon__Frame *f) {
  size_t n = threadmon__frame__get_packed_size(f);
  uint8_t *p = malloc(n ? n : 1);
  if (!p) {
    r->oom = true;
    return;
  }
  threadmon__frame__pack(f, p);
  add_frame(r, b, p, (uint32_t)n);
  free(p);
}

/* A sub-message kept packed under key. */
static void keep(fr_ring *r, keymap *m, uint64_t key, const ProtobufCMessage *msg) {
  size_t n = protobuf_c_message_get_packed_size(msg);
  uint8_t *p = malloc(n ? n : 1);
  if (!p || (protobuf_c_message_pack(msg, p), km_set(m, key, p, n)) != 0) r->oom = true;
  free(p);
}

void fr_ring_init(fr_ring *r, uint64_t window_ns) {
  memset(r, 0, sizeof *r);
  r->window_ns = window_ns;
  tm_block_writer_init(&r->blocks, LEVEL);
}

void fr_ring_free(fr_ring *r) {
  bytes_free(&r->hello);
  bytes_free(&r->desc);
  bytes_free(&r->goodbye);
  bytes_free(&r->cur);
  bytes_free(&r->probe);
  bytes_free(&r->history);
  for (size_t i = 0; i < r->n_chunks; i++) free(r->chunks[i].record);
  free(r->chunks);
  km_free(&r->lwps);
  km_free(&r->sync);
  km_free(&r->sites);
  km_free(&r->cpus);
  km_free(&r->last_state);
  km_free(&r->started);
  tm_block_writer_free(&r->blocks);
}

/* Closes the open chunk: one zstd block (or its plain frames). */
static void seal(fr_ring *r) {
  if (!r->cur.len) return;
  if (r->n_chunks == r->cap_chunks) {
    size_t cap = r->cap_chunks ? r->cap_chunks * 2 : 64;
    fr_chunk *c = realloc(r->chunks, cap * sizeof *c);
    if (!c) {
      r->oom = true;
      return;
    }
    r->chunks = c;
    r->cap_chunks = cap;
  }
  tm_index_entry meta;
  size_t n = tm_block_encode(&r->blocks, r->cur.p, r->cur.len, r->cur_first_ns, r->now_ns, &meta);
  const uint8_t *src = n ? r->blocks.out : r->cur.p;
  if (!n) n = r->cur.len;
  uint8_t *rec = malloc(n);
  if (!rec) {
    r->oom = true;
    return;
  }
  memcpy(rec, src, n);
  r->chunks[r->n_chunks++] = (fr_chunk){rec, n, r->cur_first_ns, r->now_ns};
  r->cur.len = 0;
}

static void absorb_tick(fr_ring *r, const Threadmon__Tick *t, const uint8_t *frame, uint32_t len) {
  if (t->time_ns >= r->next_history_ns) {
    add_frame(r, &r->history, frame, len);
    r->next_history_ns = t->time_ns + HISTORY_NS;
  }
  for (size_t i = 0; i < t->n_lwps; i++) keep(r, &r->lwps, t->lwps[i]->tid, &t->lwps[i]->base);
  for (size_t i = 0; i < t->n_sync; i++) keep(r, &r->sync, t->sync[i]->id, &t->sync[i]->base);
  for (size_t i = 0; i < t->n_cpus; i++) keep(r, &r->cpus, t->cpus[i]->cpu, &t->cpus[i]->base);
  for (size_t i = 0; i < t->n_sites; i++)
    keep(r, &r->sites, (uint64_t)t->sites[i]->object_id << 32 | t->sites[i]->stack_id,
         &t->sites[i]->base);
  if (t->probe) {
    size_t n = protobuf_c_message_get_packed_size(&t->probe->base);
    uint8_t *p = malloc(n ? n : 1);
    r->probe.len = 0;
    if (!p || (protobuf_c_message_pack(&t->probe->base, p), bytes_add(&r->probe, p, n)) != 0)
      r->oom = true;
    free(p);
  }
  r->dropped_until_ns = t->time_ns;
  r->dropped_seq = t->seq;
}

static void absorb_transitions(fr_ring *r, const Threadmon__Transitions *t) {
  uint64_t at = t->base_ns;
  for (size_t i = 0; i < t->n_tid && i < t->n_delta_ns && i < t->n_state; i++) {
    at += (uint64_t)t->delta_ns[i];
    fr_state_entry e = {.time_ns = at, .state = (uint32_t)t->state[i]};
    if (i < t->n_object_id) e.object = t->object_id[i];
    if (i < t->n_holder_tid) e.holder = t->holder_tid[i];
    if (e.state == THREADMON__THREAD_STATE__STATE_EXITED)
      km_remove(&r->last_state, t->tid[i]);
    else if (km_set(&r->last_state, t->tid[i], &e, sizeof e) != 0)
      r->oom = true;
  }
}

/* A thread that ended before the window: its last sample (in a tick of its
 * own at its end) and its ThreadEnd go before everything kept. */
static void absorb_end(fr_ring *r, const Threadmon__ThreadEnd *te, const uint8_t *frame,
                       uint32_t len) {
  const km_slot *s = km_get(&r->lwps, te->tid);
  Threadmon__LwpSample *sample = s ? threadmon__lwp_sample__unpack(NULL, s->len, s->data) : NULL;
  if (sample) {
    Threadmon__Tick tick = THREADMON__TICK__INIT;
    tick.time_ns = te->time_ns;
    tick.n_lwps = 1;
    tick.lwps = &sample;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_TICK;
    f.tick = &tick;
    pack_frame(r, &r->history, &f);
    threadmon__lwp_sample__free_unpacked(sample, NULL);
  }
  add_frame(r, &r->history, frame, len);
  km_remove(&r->lwps, te->tid);
  km_remove(&r->last_state, te->tid);
}

/* The frames of the oldest chunk leave what a capture still needs. */
static void absorb(fr_ring *r, const fr_chunk *c) {
  const uint8_t *raw = c->record;
  size_t len = c->len;
  uint8_t *inflated = NULL;
  uint32_t word = c->len >= 4 ? (uint32_t)c->record[0] | (uint32_t)c->record[1] << 8 |
                                    (uint32_t)c->record[2] << 16 | (uint32_t)c->record[3] << 24
                              : 0;
  if (word & TM_BLOCK_FLAG) {
    tm_block_header h;
    const uint8_t *body = c->record + TM_FRAME_PREFIX_BYTES;
    size_t n = c->len - TM_FRAME_PREFIX_BYTES;
    if (tm_block_header_parse(body, n, &h) != 0 || !(inflated = malloc(h.raw_len + 1)) ||
        tm_block_decompress(body, n, &h, inflated) != 0) {
      free(inflated);
      r->oom = true;
      return;
    }
    raw = inflated;
    len = h.raw_len;
  }
  for (size_t at = 0; len - at >= TM_FRAME_PREFIX_BYTES;) {
    uint32_t n = (uint32_t)raw[at] | (uint32_t)raw[at + 1] << 8 | (uint32_t)raw[at + 2] << 16 |
                 (uint32_t)raw[at + 3] << 24;
    const uint8_t *payload = raw + at + TM_FRAME_PREFIX_BYTES;
    at += TM_FRAME_PREFIX_BYTES + n;
    Threadmon__Frame *f = threadmon__frame__unpack(NULL, n, payload);
    if (!f) continue;
    if (f->body_case == THREADMON__FRAME__BODY_TICK) absorb_tick(r, f->tick, payload, n);
    if (f->body_case == THREADMON__FRAME__BODY_TRANSITIONS) absorb_transitions(r, f->transitions);
    if (f->body_case == THREADMON__FRAME__BODY_THREAD_END) absorb_end(r, f->thread_end, payload, n);
    threadmon__frame__free_unpacked(f, NULL);
  }
  free(inflated);
  r->dropped = true;
}

static void evict(fr_ring *r) {
  size_t k = 0;
  while (k < r->n_chunks && r->now_ns - r->chunks[k].last_ns > r->window_ns &&
         !(r->holds && r->chunks[k].last_ns >= r->hold_from_ns)) {
    absorb(r, &r->chunks[k]);
    free(r->chunks[k].record);
    k++;
  }
  if (!k) return;
  memmove(r->chunks, r->chunks + k, (r->n_chunks - k) * sizeof *r->chunks);
  r->n_chunks -= k;
}

void fr_ring_hold(fr_ring *r, uint64_t from_ns) {
  if (!r->holds++ || from_ns < r->hold_from_ns) r->hold_from_ns = from_ns;
}

void fr_ring_release(fr_ring *r) {
  if (r->holds && !--r->holds) evict(r);
}

static void detail(fr_ring *r, const uint8_t *payload, uint32_t len) {
  if (!r->cur.len) r->cur_first_ns = r->now_ns;
  add_frame(r, &r->cur, payload, len);
  if (r->cur.len >= CHUNK_BYTES || r->now_ns - r->cur_first_ns >= CHUNK_NS(r)) seal(r);
  evict(r);
}

void fr_ring_take(fr_ring *r, const uint8_t *payload, uint32_t len, const Threadmon__Frame *f) {
  switch (f->body_case) {
    case THREADMON__FRAME__BODY_HELLO:
      if (r->hello.len) return; /* a reconnection's: the first one stands */
      add_frame(r, &r->hello, payload, len);
      r->start_ns = r->now_ns = f->hello->start_monotonic_ns;
      return;
    case THREADMON__FRAME__BODY_GOODBYE:
      r->goodbye.len = 0;
      add_frame(r, &r->goodbye, payload, len);
      return;
    case THREADMON__FRAME__BODY_TICK:
      if (f->tick->time_ns > r->now_ns) r->now_ns = f->tick->time_ns;
      detail(r, payload, len);
      return;
    case THREADMON__FRAME__BODY_TRANSITIONS:
    case THREADMON__FRAME__BODY_SWITCHES:
    case THREADMON__FRAME__BODY_USER_SWITCHES:
    case THREADMON__FRAME__BODY_THREAD_END:
      detail(r, payload, len);
      return;
    case THREADMON__FRAME__BODY_THREAD_START:
      if (km_set(&r->started, f->thread_start->tid, &f->thread_start->time_ns,
                 sizeof f->thread_start->time_ns) != 0)
        r->oom = true;
      add_frame(r, &r->desc, payload, len);
      return;
    default: /* descriptions: attributes, objects, stacks, notices, user threads */
      add_frame(r, &r->desc, payload, len);
      return;
  }
}

/* ---- writing a capture ---- */

typedef struct out_file {
  int fd;
  uint64_t at;
  tm_index index;
  int err;
} out_file;

static void out_record(out_file *o, const uint8_t *p, size_t n, tm_index_entry meta) {
  if (o->err) return;
  meta.offset = o->at;
  for (size_t done = 0; done < n;) {
    ssize_t w = write(o->fd, p + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      o->err = w < 0 ? errno : EIO;
      return;
    }
    done += (size_t)w;
  }
  o->at += n;
  if (meta.frames && tm_index_add(&o->index, &meta) != 0) o->err = ENOMEM;
}

/* Frames as one block when that pays, else plain. */
static void out_frames(fr_ring *r, out_file *o, const fr_bytes *b, uint64_t first_ns,
                       uint64_t last_ns) {
  if (!b->len) return;
  tm_index_entry meta = {.first_ns = first_ns, .last_ns = last_ns};
  size_t n = tm_block_encode(&r->blocks, b->p, b->len, first_ns, last_ns, &meta);
  if (n) {
    out_record(o, r->blocks.out, n, meta);
    return;
  }
  meta.kinds = tm_frames_describe(b->p, b->len, &meta.frames);
  out_record(o, b->p, b->len, meta);
}

static void *unpack_all(const keymap *m, size_t *n, const ProtobufCMessageDescriptor *desc) {
  const km_slot **slots = km_sorted(m, n);
  ProtobufCMessage **out = calloc(*n + 1, sizeof *out);
  size_t k = 0;
  for (size_t i = 0; out && i < *n; i++)
    if ((out[k] = protobuf_c_message_unpack(desc, NULL, slots[i]->len, slots[i]->data))) k++;
  *n = k;
  free(slots);
  return out;
}

static void free_all(void *msgs, size_t n) {
  for (size_t i = 0; i < n; i++)
    protobuf_c_message_free_unpacked(((ProtobufCMessage **)msgs)[i], NULL);
  free(msgs);
}

static void note(fr_ring *r, fr_bytes *b, uint64_t time_ns, char *text) {
  Threadmon__Notice notice = THREADMON__NOTICE__INIT;
  notice.time_ns = time_ns;
  notice.text = text;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_NOTICE;
  f.notice = &notice;
  pack_frame(r, b, &f);
}

/* What the dropped detail left: a tick of every latest counter, each live
 * thread's last state (UNKNOWN from its start, as after a capture gap), and
 * a notice saying so. No switch record before the window is kept, so none
 * needs distrusting (a capture gap's lost = 1 would read as data lost). */
static void baseline(fr_ring *r, fr_bytes *b, const char *why) {
  if (r->history.len && bytes_add(b, r->history.p, r->history.len)) r->oom = true;
  Threadmon__Tick tick = THREADMON__TICK__INIT;
  tick.seq = r->dropped_seq;
  tick.time_ns = r->dropped_until_ns;
  tick.lwps = unpack_all(&r->lwps, &tick.n_lwps, &threadmon__lwp_sample__descriptor);
  tick.sync = unpack_all(&r->sync, &tick.n_sync, &threadmon__sync_stats__descriptor);
  tick.cpus = unpack_all(&r->cpus, &tick.n_cpus, &threadmon__cpu_sample__descriptor);
  tick.sites = unpack_all(&r->sites, &tick.n_sites, &threadmon__site_stats__descriptor);
  tick.probe = r->probe.len ? threadmon__probe_stats__unpack(NULL, r->probe.len, r->probe.p) : NULL;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TICK;
  f.tick = &tick;
  pack_frame(r, b, &f);
  free_all(tick.lwps, tick.n_lwps);
  free_all(tick.sync, tick.n_sync);
  free_all(tick.cpus, tick.n_cpus);
  free_all(tick.sites, tick.n_sites);
  if (tick.probe) threadmon__probe_stats__free_unpacked(tick.probe, NULL);

  size_t n;
  const km_slot **states = km_sorted(&r->last_state, &n);
  uint32_t *tid = calloc(2 * n + 1, sizeof *tid), *obj = calloc(2 * n + 1, sizeof *obj);
  uint32_t *holder = calloc(2 * n + 1, sizeof *holder);
  int64_t *delta = calloc(2 * n + 1, sizeof *delta);
  Threadmon__ThreadState *state = calloc(2 * n + 1, sizeof *state);
  if (tid && obj && holder && delta && state) {
    Threadmon__Transitions t = THREADMON__TRANSITIONS__INIT;
    uint64_t prev = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      fr_state_entry e;
      memcpy(&e, states[i]->data, sizeof e);
      const km_slot *st = km_get(&r->started, states[i]->key);
      uint64_t from = r->start_ns;
      if (st) memcpy(&from, st->data, sizeof from);
      if (from > e.time_ns) from = e.time_ns;
      tid[k] = (uint32_t)states[i]->key;
      delta[k] = (int64_t)(from - prev);
      state[k++] = THREADMON__THREAD_STATE__STATE_UNKNOWN;
      tid[k] = (uint32_t)states[i]->key;
      delta[k] = (int64_t)(e.time_ns - from);
      state[k] = (Threadmon__ThreadState)e.state;
      obj[k] = e.object;
      holder[k++] = e.holder;
      prev = e.time_ns;
    }
    t.n_tid = t.n_delta_ns = t.n_state = t.n_object_id = t.n_holder_tid = k;
    t.tid = tid;
    t.delta_ns = delta;
    t.state = state;
    t.object_id = obj;
    t.holder_tid = holder;
    f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
    f.transitions = &t;
    if (k) pack_frame(r, b, &f);
  } else {
    r->oom = true;
  }
  free(states);
  free(tid);
  free(obj);
  free(holder);
  free(delta);
  free(state);

  char text[320];
  snprintf(text, sizeof text,
           TM_NOTICE_FLIGHT
           "%s" TM_NOTICE_FLIGHT_KEPT
           "%.0f s only, from %.1f s; the "
           "counters are whole-run totals, states before that are estimated from them",
           why, (double)r->window_ns / 1e9, (double)(r->dropped_until_ns - r->start_ns) / 1e9);
  note(r, b, r->dropped_until_ns, text);
}

void fr_ring_set_end(fr_ring *r, Threadmon__EndReason reason, int status) {
  if (r->goodbye.len || !r->hello.len) return;
  char text[200];
  bool killed = reason == THREADMON__END_REASON__END_SIGNAL;
  snprintf(text, sizeof text,
           "flight recorder: the program's end (%s %d) as the launcher saw it; %s",
           killed ? "killed by signal" : "exit status", status,
           killed ? "the probe could not send it (the program was killed outright)"
                  : "the stream was cut before the probe's Goodbye: what it had not sent is lost");
  note(r, &r->goodbye, r->now_ns, text);
  Threadmon__Goodbye b = THREADMON__GOODBYE__INIT;
  b.time_ns = r->now_ns;
  b.reason = reason;
  b.exit_status = status;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_GOODBYE;
  f.goodbye = &b;
  pack_frame(r, &r->goodbye, &f);
}

static void chunk_meta(const fr_chunk *c, tm_index_entry *meta) {
  *meta = (tm_index_entry){.first_ns = c->first_ns, .last_ns = c->last_ns};
  uint32_t word = (uint32_t)c->record[0] | (uint32_t)c->record[1] << 8 |
                  (uint32_t)c->record[2] << 16 | (uint32_t)c->record[3] << 24;
  tm_block_header h;
  if ((word & TM_BLOCK_FLAG) && tm_block_header_parse(c->record + TM_FRAME_PREFIX_BYTES,
                                                      c->len - TM_FRAME_PREFIX_BYTES, &h) == 0) {
    meta->kinds = h.kinds;
    meta->frames = h.frames;
  } else {
    meta->kinds = tm_frames_describe(c->record, c->len, &meta->frames);
  }
}

int fr_ring_write(fr_ring *r, const char *path, const char *why) {
  seal(r);
  /* Written under a fresh name no one else can have made (never a
   * predictable OUT.partial another user could plant a link at), then
   * renamed onto path. */
  char tmp[4200];
  out_file o = {.fd = tm_create_temp(path, ".partial", tmp, sizeof tmp)};
  if (o.fd < 0) return -1;
  uint8_t header[TM_HEADER_BYTES];
  tm_header_encode_major(header, TM_FORMAT_MAJOR_BLOCKS);
  out_record(&o, header, sizeof header, (tm_index_entry){0});

  fr_bytes pre = {0};
  if (bytes_add(&pre, r->hello.p, r->hello.len) || bytes_add(&pre, r->desc.p, r->desc.len))
    r->oom = true;
  if (r->dropped) baseline(r, &pre, why);
  out_frames(r, &o, &pre, r->start_ns, r->dropped ? r->dropped_until_ns : r->start_ns);
  bytes_free(&pre);

  for (size_t i = 0; i < r->n_chunks; i++) {
    tm_index_entry meta;
    chunk_meta(&r->chunks[i], &meta);
    out_record(&o, r->chunks[i].record, r->chunks[i].len, meta);
  }
  /* The probe's Goodbye when the stream brought one; a snapshot (or a
   * program killed) has none: a note says so, and readers see a capture
   * that ends before the program did. */
  fr_bytes end = {0};
  if (r->goodbye.len) {
    if (bytes_add(&end, r->goodbye.p, r->goodbye.len)) r->oom = true;
  } else {
    char text[320];
    snprintf(text, sizeof text,
             TM_NOTICE_FLIGHT
             "%s): written at %.1f s without the program's Goodbye (it was "
             "still running, or was killed)",
             why, (double)(r->now_ns - r->start_ns) / 1e9);
    note(r, &end, r->now_ns, text);
  }
  out_frames(r, &o, &end, r->now_ns, r->now_ns);
  bytes_free(&end);

  uint8_t *index = NULL;
  size_t n = tm_index_encode(&o.index, o.at, &index);
  if (n) out_record(&o, index, n, (tm_index_entry){0});
  free(index);
  tm_index_free(&o.index);
  if (close(o.fd) != 0 && !o.err) o.err = errno;
  if (!o.err && tm_rename_onto(tmp, path) != 0) o.err = errno;
  if (o.err) {
    unlink(tmp);
    errno = o.err;
    return -1;
  }
  return 0;
}
