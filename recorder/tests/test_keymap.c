/* keymap against a plain array, through random sets and removes (removal
 * shifts entries back along their probe chains: the part easy to get
 * wrong), and its iteration order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keymap.h"

#define KEYS 300

int main(void) {
  keymap m = {0};
  int have[KEYS] = {0};
  uint32_t value[KEYS] = {0};
  unsigned seed = 12345;
  int failures = 0;
  for (int step = 0; step < 200000; step++) {
    seed = seed * 1103515245u + 12345u;
    /* Keys spread over a wide range, clustered mod the table size. */
    uint32_t k = (seed >> 8) % KEYS;
    uint64_t key = (uint64_t)k * 4096 + 7;
    if ((seed >> 4) % 3) {
      uint32_t v = seed;
      if (km_set(&m, key, &v, sizeof v) != 0) return 1;
      have[k] = 1;
      value[k] = v;
    } else {
      km_remove(&m, key);
      have[k] = 0;
    }
    if (step % 997 == 0 || step == 199999) {
      size_t count = 0;
      for (uint32_t i = 0; i < KEYS; i++) {
        const km_slot *s = km_get(&m, (uint64_t)i * 4096 + 7);
        uint32_t got = 0;
        if (s) memcpy(&got, s->data, sizeof got);
        if (!!s != have[i] || (s && got != value[i])) {
          fprintf(stderr, "step %d key %u: found %d want %d\n", step, i, !!s, have[i]);
          failures++;
        }
        count += (size_t)have[i];
      }
      if (m.count != count) {
        fprintf(stderr, "step %d: count %zu want %zu\n", step, m.count, count);
        failures++;
      }
    }
    if (failures) break;
  }
  /* Iteration keeps the order keys were first set in. */
  keymap o = {0};
  for (uint64_t k = 50; k > 0; k--) km_set(&o, k * 977, &k, sizeof k);
  km_remove(&o, 25 * 977);
  size_t n;
  const km_slot **sorted = km_sorted(&o, &n);
  if (n != 49) failures++;
  for (size_t i = 0; i + 1 < n; i++)
    if (sorted[i]->key <= sorted[i + 1]->key) failures++; /* set from 50 down */
  free(sorted);
  km_free(&o);
  km_free(&m);
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  return failures ? 1 : 0;
}
