/* keymap: uint64 key -> owned bytes, open addressing. The flight
 * recorder's latest sample per thread, object, call site and CPU, and its
 * threads' last states. */
#ifndef THREADMON_KEYMAP_H
#define THREADMON_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct km_slot {
  uint64_t key;
  uint8_t *data; /* NULL: empty slot */
  size_t len;
  uint64_t order; /* when the key was first set: iteration keeps that order */
} km_slot;

typedef struct keymap {
  km_slot *slots;
  size_t cap, count;
  uint64_t next_order;
} keymap;

/* Copies len bytes as key's value. Returns -1 when out of memory. */
int km_set(keymap *m, uint64_t key, const void *data, size_t len);
const km_slot *km_get(const keymap *m, uint64_t key);
void km_remove(keymap *m, uint64_t key);
/* The occupied slots in the order their keys were first set (malloc'd,
 * *n of them; NULL when empty or out of memory). */
const km_slot **km_sorted(const keymap *m, size_t *n);
void km_free(keymap *m);

#endif
