#include "triggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct open_wait {
  uint64_t since_ns;
  uint32_t object;
  bool told; /* the wait trigger fired for it already */
} open_wait;

bool fr_trigger_parse(fr_triggers *t, const char *spec) {
  if (strcmp(spec, "deadlock") == 0) {
    t->deadlock = true;
    return true;
  }
  if (strncmp(spec, "wait>", 5) != 0) return false;
  char *end;
  double v = strtod(spec + 5, &end);
  double scale = strcmp(end, "ms") == 0   ? 1e6
                 : strcmp(end, "s") == 0  ? 1e9
                 : strcmp(end, "m") == 0  ? 60e9
                 : strcmp(end, "us") == 0 ? 1e3
                                          : 0;
  if (end == spec + 5 || !(v > 0) || scale == 0 || v * scale > 1e15) return false;
  t->wait_ns = (uint64_t)(v * scale);
  return true;
}

static uint32_t kind_of(const fr_triggers *t, uint32_t object) {
  const km_slot *s = km_get(&t->kinds, object);
  uint32_t k = 0;
  if (s) memcpy(&k, s->data, sizeof k);
  return k;
}

/* Objects with one owner at a time (states.def's held kinds), the only
 * ones a cycle is made of. */
static bool owned(const fr_triggers *t, uint32_t object) {
  switch (kind_of(t, object)) {
#define TM_SYNC_KIND(name, number, text, held) \
  case number:                                 \
    return held;
#include "states.def"
    default:
      return false;
  }
}

static uint32_t owner_of(const fr_triggers *t, uint32_t object) {
  const km_slot *s = km_get(&t->owners, object);
  uint32_t o = 0;
  if (s) memcpy(&o, s->data, sizeof o);
  return o;
}

static bool is_wait(uint32_t state) {
  return (state >= THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX &&
          state <= THREADMON__THREAD_STATE__STATE_BLOCKED_JOIN) ||
         state == THREADMON__THREAD_STATE__STATE_BLOCKED_FUTEX;
}

static bool transitions(fr_triggers *t, const Threadmon__Transitions *tr, uint64_t start_ns,
                        char *why, size_t n, uint64_t *at_ns) {
  bool fired = false;
  uint64_t at = tr->base_ns;
  for (size_t i = 0; i < tr->n_tid && i < tr->n_delta_ns && i < tr->n_state; i++) {
    at += (uint64_t)tr->delta_ns[i];
    uint32_t tid = tr->tid[i];
    const km_slot *s = km_get(&t->waits, tid);
    if (s) { /* the thread's next entry ends its wait */
      open_wait w;
      memcpy(&w, s->data, sizeof w);
      if (t->wait_ns && !w.told && at - w.since_ns > t->wait_ns && !fired) {
        snprintf(why, n, "wait>%.0fms: thread %u waited %.0f ms on object %u, until %.1f s",
                 (double)t->wait_ns / 1e6, tid, (double)(at - w.since_ns) / 1e6, w.object,
                 (double)(at - start_ns) / 1e9);
        *at_ns = w.since_ns + t->wait_ns;
        fired = true;
      }
      if (owned(t, w.object)) km_set(&t->owners, w.object, &tid, sizeof tid);
      km_remove(&t->waits, tid);
    }
    uint32_t object = i < tr->n_object_id ? tr->object_id[i] : 0;
    if (!is_wait((uint32_t)tr->state[i]) || !object) continue;
    open_wait w = {.since_ns = at, .object = object};
    km_set(&t->waits, tid, &w, sizeof w);
    uint32_t holder = i < tr->n_holder_tid ? tr->holder_tid[i] : 0;
    if (holder && owned(t, object)) km_set(&t->owners, object, &holder, sizeof holder);
  }
  return fired;
}

/* Follows waiter -> object -> owner from each waiter; a walk back to its
 * start is a cycle. */
static bool cycle(const fr_triggers *t, char *why, size_t n, uint64_t at, uint64_t *formed_ns) {
  for (size_t i = 0; i < t->waits.cap; i++) {
    const km_slot *s = &t->waits.slots[i];
    if (!s->data) continue;
    uint32_t first = (uint32_t)s->key, x = first;
    uint64_t formed = 0; /* its last wait's start */
    char path[160];
    int len = snprintf(path, sizeof path, "%u", first);
    for (int step = 0; step < 64; step++) {
      const km_slot *w = km_get(&t->waits, x);
      if (!w) break;
      open_wait ow;
      memcpy(&ow, w->data, sizeof ow);
      if (!owned(t, ow.object)) break;
      if (ow.since_ns > formed) formed = ow.since_ns;
      uint32_t o = owner_of(t, ow.object);
      if (!o || o == x) break;
      if (len > 0 && (size_t)len < sizeof path)
        len += snprintf(path + len, sizeof path - (size_t)len, " -> object %u -> %u", ow.object, o);
      if (o == first) {
        snprintf(why, n, "deadlock: threads %s, at %.1f s", path, (double)at / 1e9);
        *formed_ns = formed;
        return true;
      }
      x = o;
    }
  }
  return false;
}

bool fr_triggers_take(fr_triggers *t, const Threadmon__Frame *f, uint64_t start_ns, char *why,
                      size_t n, uint64_t *at_ns) {
  switch (f->body_case) {
    case THREADMON__FRAME__BODY_SYNC_OBJECT: {
      uint32_t k = (uint32_t)f->sync_object->kind;
      if (f->sync_object->id) km_set(&t->kinds, f->sync_object->id, &k, sizeof k);
      return false;
    }
    case THREADMON__FRAME__BODY_TRANSITIONS:
      return transitions(t, f->transitions, start_ns, why, n, at_ns);
    case THREADMON__FRAME__BODY_TICK: {
      uint64_t now = f->tick->time_ns;
      if (t->deadlock && cycle(t, why, n, now - start_ns, at_ns)) return true;
      if (!t->wait_ns) return false;
      for (size_t i = 0; i < t->waits.cap; i++) { /* a wait still open past the threshold */
        km_slot *s = &t->waits.slots[i];
        open_wait w;
        if (!s->data) continue;
        memcpy(&w, s->data, sizeof w);
        if (w.told || now < w.since_ns || now - w.since_ns <= t->wait_ns) continue;
        w.told = true;
        memcpy(s->data, &w, sizeof w);
        snprintf(why, n, "wait>%.0fms: thread %u waiting on object %u for %.0f ms at %.1f s",
                 (double)t->wait_ns / 1e6, (unsigned)s->key, w.object,
                 (double)(now - w.since_ns) / 1e6, (double)(now - start_ns) / 1e9);
        *at_ns = w.since_ns + t->wait_ns;
        return true;
      }
      return false;
    }
    default:
      return false;
  }
}

void fr_triggers_free(fr_triggers *t) {
  km_free(&t->waits);
  km_free(&t->owners);
  km_free(&t->kinds);
}
