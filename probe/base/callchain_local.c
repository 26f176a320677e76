/* tm_call_chain_clean and tm_call_chain_linked: the call-chain filters
 * (callchain.c) on this process's own code and symbols. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callchain.h"
#include "segments.h"
#include "symbolize.h"

static bool local_read(void *arg, uintptr_t a, void *out, size_t len, unsigned flags) {
  (void)arg;
  if (!tm_in_segment(a, len, flags)) return false;
  memcpy(out, (const void *)a, len);
  return true;
}

static void local_function_at(void *arg, uintptr_t a, char *module, size_t module_len, char *name,
                              size_t name_len, uintptr_t *start) {
  (void)arg;
  tm_symbol s;
  if (tm_symbolize(a, &s) < 0) return;
  snprintf(module, module_len, "%s", s.module);
  char *plus = strrchr(s.symbol, '+');
  if (!s.symbol[0] || !plus) return;
  *plus = 0;
  snprintf(name, name_len, "%s", s.symbol);
  *start = a - (uintptr_t)strtoul(plus + 1, NULL, 16);
}

static const tm_code_view local = {local_read, local_function_at, NULL};

int tm_call_chain_clean(void **pcs, int n, int exact) {
  uintptr_t addrs[TM_CHAIN_MAX];
  if (n > TM_CHAIN_MAX) n = TM_CHAIN_MAX;
  for (int k = 0; k < n; k++) addrs[k] = (uintptr_t)pcs[k];
  int kept = tm_call_chain_clean_in(&local, addrs, n, exact);
  for (int k = 0; k < kept; k++) pcs[k] = (void *)addrs[k];
  return kept;
}

int tm_call_chain_linked(void *const *pcs, int n) {
  uintptr_t addrs[TM_CHAIN_MAX];
  if (n > TM_CHAIN_MAX) n = TM_CHAIN_MAX;
  for (int k = 0; k < n; k++) addrs[k] = (uintptr_t)pcs[k];
  return tm_call_chain_linked_in(&local, addrs, n);
}
