#include "keymap.h"

#include <stdlib.h>
#include <string.h>

static size_t hash(uint64_t k, size_t cap) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return (size_t)k & (cap - 1);
}

static km_slot *find(const keymap *m, uint64_t key) {
  if (!m->cap) return NULL;
  for (size_t i = hash(key, m->cap);; i = (i + 1) & (m->cap - 1))
    if (!m->slots[i].data || m->slots[i].key == key) return &m->slots[i];
}

static int grow(keymap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  km_slot *old = m->slots;
  size_t old_cap = m->cap;
  m->slots = calloc(cap, sizeof *m->slots);
  if (!m->slots) {
    m->slots = old;
    return -1;
  }
  m->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].data) *find(m, old[i].key) = old[i];
  free(old);
  return 0;
}

int km_set(keymap *m, uint64_t key, const void *data, size_t len) {
  if ((m->count + 1) * 2 > m->cap && grow(m) != 0) return -1;
  km_slot *s = find(m, key);
  uint8_t *copy = malloc(len ? len : 1);
  if (!copy) return -1;
  memcpy(copy, data, len);
  if (s->data) {
    free(s->data);
  } else {
    s->key = key;
    s->order = m->next_order++;
    m->count++;
  }
  s->data = copy;
  s->len = len;
  return 0;
}

const km_slot *km_get(const keymap *m, uint64_t key) {
  km_slot *s = find(m, key);
  return s && s->data ? s : NULL;
}

/* Backward-shift deletion keeps every probe chain whole. */
void km_remove(keymap *m, uint64_t key) {
  km_slot *s = find(m, key);
  if (!s || !s->data) return;
  free(s->data);
  size_t i = (size_t)(s - m->slots);
  for (size_t j = (i + 1) & (m->cap - 1); m->slots[j].data; j = (j + 1) & (m->cap - 1)) {
    size_t home = hash(m->slots[j].key, m->cap);
    /* j's entry may move to i when i lies on its chain (home .. j). */
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      m->slots[i] = m->slots[j];
      i = j;
    }
  }
  m->slots[i].data = NULL;
  m->count--;
}

static int by_order(const void *a, const void *b) {
  uint64_t x = (*(const km_slot *const *)a)->order, y = (*(const km_slot *const *)b)->order;
  return x < y ? -1 : x > y;
}

const km_slot **km_sorted(const keymap *m, size_t *n) {
  *n = 0;
  if (!m->count) return NULL;
  const km_slot **out = malloc(m->count * sizeof *out);
  if (!out) return NULL;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].data) out[(*n)++] = &m->slots[i];
  qsort(out, *n, sizeof *out, by_order);
  return out;
}

void km_free(keymap *m) {
  for (size_t i = 0; i < m->cap; i++) free(m->slots[i].data);
  free(m->slots);
  memset(m, 0, sizeof *m);
}
