/* Unwind tables copied from another process (rcfi.h). */
#include "rcfi.h"

#include <limits.h>
#include <stdlib.h>

#include "elffile.h"
#include "remote.h"

/* A segment larger than this is not copied (no library's read-only
 * segment comes near it). */
#define SEGMENT_MAX (64u << 20)
/* All modules' copies: a target may map thousands of files. */
#define COPIES_MAX (256u << 20)

typedef struct module_tables {
  bool loaded;
  uint8_t *copy; /* NULL: none (no .eh_frame_hdr, unreadable) */
  size_t hdr_off;
  uintptr_t remote; /* the target's address of copy[0] */
  size_t len;
} module_tables;

struct tm_rcfi {
  const tm_maps *maps;
  module_tables *mods;
  size_t copied; /* bytes of all copies */
};

tm_rcfi *tm_rcfi_new(const tm_maps *m) {
  tm_rcfi *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->maps = m;
  c->mods = calloc(m->nmodules ? m->nmodules : 1, sizeof *c->mods);
  if (!c->mods) {
    free(c);
    return NULL;
  }
  return c;
}

void tm_rcfi_free(tm_rcfi *c) {
  if (!c) return;
  for (size_t i = 0; i < c->maps->nmodules; i++) free(c->mods[i].copy);
  free(c->mods);
  free(c);
}

/* The PT_GNU_EH_FRAME and the PT_LOAD holding it, from the file. */
static bool eh_segment(const tm_module *mod, GElf_Phdr *eh, GElf_Phdr *load, tm_notes *notes) {
  tm_elf_file f;
  if (!tm_module_open(mod, &f, notes)) return false;
  size_t n;
  bool have_eh = false, have_load = false;
  if (elf_getphdrnum(f.elf, &n) == 0) {
    if (n > INT_MAX) n = INT_MAX;
    for (size_t i = 0; i < n && !have_eh; i++)
      have_eh = gelf_getphdr(f.elf, (int)i, eh) && eh->p_type == PT_GNU_EH_FRAME;
    for (size_t i = 0; i < n && have_eh && !have_load; i++)
      have_load = gelf_getphdr(f.elf, (int)i, load) && load->p_type == PT_LOAD &&
                  eh->p_vaddr >= load->p_vaddr && eh->p_vaddr - load->p_vaddr < load->p_filesz;
  }
  tm_elf_close(&f);
  return have_eh && have_load;
}

static void load(tm_rcfi *c, const tm_module *mod, module_tables *t) {
  const tm_maps *m = c->maps;
  t->loaded = true;
  GElf_Phdr eh, seg;
  if (!eh_segment(mod, &eh, &seg, m->notes)) return;
  if (seg.p_filesz > SEGMENT_MAX || c->copied + seg.p_filesz > COPIES_MAX) {
    tm_note(m->notes, "%s: its unwind tables' segment (%llu MiB) is past the %u MiB copied "
            "for one module or %u MiB for all: its frames are scanned, not unwound", mod->path,
            (unsigned long long)(seg.p_filesz >> 20), SEGMENT_MAX >> 20, COPIES_MAX >> 20);
    return;
  }
  t->copy = malloc(seg.p_filesz);
  if (!t->copy) return;
  t->remote = (uintptr_t)seg.p_vaddr + mod->bias;
  ssize_t got = tm_remote_read(m->pid, t->remote, t->copy, seg.p_filesz);
  t->hdr_off = (size_t)(eh.p_vaddr - seg.p_vaddr);
  if (got < 0 || (size_t)got <= t->hdr_off) {
    free(t->copy);
    t->copy = NULL;
    return;
  }
  t->len = (size_t)got;
  c->copied += seg.p_filesz;
}

bool tm_rcfi_find(void *arg, uintptr_t ip, tm_cfi_tables *out) {
  tm_rcfi *c = arg;
  const tm_mapping *mp = tm_maps_find(c->maps, ip);
  if (!mp || !mp->exec || mp->module < 0) return false;
  module_tables *t = &c->mods[mp->module];
  if (!t->loaded) load(c, &c->maps->modules[mp->module], t);
  if (!t->copy) return false;
  *out = (tm_cfi_tables){t->copy + t->hdr_off, t->copy, t->copy + t->len,
                         (intptr_t)(t->remote - (uintptr_t)t->copy)};
  return true;
}
