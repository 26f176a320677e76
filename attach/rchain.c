/* The probe's call-chain filter on another process (rchain.h). */
#include "rchain.h"

#include <elf.h>
#include <stdio.h>

#include "callchain.h"
#include "remote.h"

typedef struct remote_view {
  const tm_maps *maps;
  tm_symtabs *syms;
} remote_view;

/* The bytes must lie in one mapping with the permissions a segment with
 * these PF_* flags gets. */
static bool remote_read(void *arg, uintptr_t a, void *out, size_t len, unsigned flags) {
  const remote_view *rv = arg;
  const tm_mapping *mp = tm_maps_find(rv->maps, a);
  if (!mp || mp->module < 0 || len > mp->end - a) return false;
  if (((flags & PF_X) && !mp->exec) || ((flags & PF_R) && !mp->read) || ((flags & PF_W) && !mp->write))
    return false;
  return tm_remote_read(rv->maps->pid, a, out, len) == (ssize_t)len;
}

static void remote_function_at(void *arg, uintptr_t a, char *module, size_t module_len, char *name,
                               size_t name_len, uintptr_t *start) {
  const remote_view *rv = arg;
  const tm_module *mod = tm_maps_module_of(rv->maps, a);
  if (!mod) return;
  snprintf(module, module_len, "%s", tm_module_name(mod));
  uintptr_t off;
  const char *sym = tm_symtabs_lookup(rv->syms, a, false, &off);
  if (!sym) return;
  snprintf(name, name_len, "%s", sym);
  *start = a - off;
}

int tm_remote_chain_clean(const tm_maps *m, tm_symtabs *syms, uintptr_t *pcs, int n, int exact) {
  remote_view rv = {m, syms};
  tm_code_view v = {remote_read, remote_function_at, &rv};
  return tm_call_chain_clean_in(&v, pcs, n, exact);
}
