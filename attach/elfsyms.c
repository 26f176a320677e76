/* ELF symbol tables of a target's modules (elfsyms.h). */
#include "elfsyms.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct sym {
  uint64_t addr, size; /* link-time */
  char *name;
} sym;

typedef struct table {
  bool loaded;
  sym *syms;
  size_t count;
} table;

struct tm_symtabs {
  const tm_maps *maps;
  table *tables; /* one per module */
};

static int by_addr(const void *a, const void *b) {
  const sym *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Appends the FUNC and OBJECT symbols of every section of `type`; the
 * count added. */
static size_t add_section(Elf *e, Elf64_Word type, table *t) {
  size_t added = 0;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || sh.sh_entsize == 0) continue;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d) continue;
    size_t n = sh.sh_size / sh.sh_entsize;
    sym *grown = realloc(t->syms, (t->count + n) * sizeof *grown);
    if (!grown) return added;
    t->syms = grown;
    for (size_t i = 0; i < n; i++) {
      GElf_Sym s;
      if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || s.st_value == 0) continue;
      int kind = GELF_ST_TYPE(s.st_info);
      if (kind != STT_FUNC && kind != STT_OBJECT && kind != STT_TLS) continue;
      const char *name = elf_strptr(e, sh.sh_link, s.st_name);
      if (!name || !*name || kind == STT_TLS) continue;
      /* A debug file's .symtab names versions too: pthread_mutex_lock@@GLIBC_2.2.5. */
      char *copy = strndup(name, strcspn(name, "@"));
      if (!copy) continue;
      t->syms[t->count++] = (sym){s.st_value, s.st_size, copy};
      added++;
    }
  }
  return added;
}

static size_t load_file(const char *path, Elf64_Word type, table *t) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
  size_t n = e && elf_kind(e) == ELF_K_ELF ? add_section(e, type, t) : 0;
  if (e) elf_end(e);
  close(fd);
  return n;
}

static void load(const tm_module *mod, table *t) {
  t->loaded = true;
  if (load_file(mod->open_path, SHT_SYMTAB, t) == 0 && mod->build_id_len >= 2) {
    char dbg[160];
    int w = snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%02x/", mod->build_id[0]);
    for (size_t k = 1; k < mod->build_id_len; k++)
      w += snprintf(dbg + w, sizeof dbg - (size_t)w, "%02x", mod->build_id[k]);
    snprintf(dbg + w, sizeof dbg - (size_t)w, ".debug");
    load_file(dbg, SHT_SYMTAB, t);
  }
  load_file(mod->open_path, SHT_DYNSYM, t);
  qsort(t->syms, t->count, sizeof *t->syms, by_addr);
}

tm_symtabs *tm_symtabs_new(const tm_maps *m) {
  tm_symtabs *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->maps = m;
  s->tables = calloc(m->nmodules ? m->nmodules : 1, sizeof *s->tables);
  if (!s->tables) {
    free(s);
    return NULL;
  }
  return s;
}

void tm_symtabs_free(tm_symtabs *s) {
  if (!s) return;
  for (size_t i = 0; i < s->maps->nmodules; i++) {
    for (size_t k = 0; k < s->tables[i].count; k++) free(s->tables[i].syms[k].name);
    free(s->tables[i].syms);
  }
  free(s->tables);
  free(s);
}

/* Of the symbols at the same address, the one with fewest leading
 * underscores (pthread_mutex_lock, not ___pthread_mutex_lock). */
static const sym *public_alias(const table *t, size_t at) {
  const sym *best = &t->syms[at];
  size_t rank = strspn(best->name, "_");
  for (size_t k = at; k > 0 && t->syms[k - 1].addr == best->addr; k--)
    if (strspn(t->syms[k - 1].name, "_") < rank) best = &t->syms[k - 1], rank = strspn(best->name, "_");
  for (size_t k = at + 1; k < t->count && t->syms[k].addr == t->syms[at].addr; k++)
    if (strspn(t->syms[k].name, "_") < rank) best = &t->syms[k], rank = strspn(best->name, "_");
  return best;
}

const char *tm_symtabs_lookup(tm_symtabs *s, uintptr_t addr, bool return_address,
                              uintptr_t *off) {
  uintptr_t at = return_address ? addr - 1 : addr;
  const tm_module *mod = tm_maps_module_of(s->maps, at);
  if (!mod) return NULL;
  table *t = &s->tables[mod - s->maps->modules];
  if (!t->loaded) load(mod, t);
  uint64_t link = at - mod->bias;
  size_t lo = 0, hi = t->count; /* first symbol above link */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (t->syms[mid].addr <= link) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return NULL;
  /* The nearest symbols start at syms[lo - 1].addr: of those, one whose
   * size covers link, else the last (one without a size holds up to the
   * next symbol). */
  size_t i = lo - 1;
  for (size_t k = lo - 1; t->syms[k].addr == t->syms[lo - 1].addr; k--) {
    if (link < t->syms[k].addr + t->syms[k].size) {
      i = k;
      break;
    }
    if (k == 0) break;
  }
  const sym *best = &t->syms[i];
  if (best->size && link >= best->addr + best->size) return NULL;
  best = public_alias(t, (size_t)(best - t->syms));
  *off = (uintptr_t)(addr - mod->bias - best->addr);
  return best->name;
}

void tm_symtabs_format(tm_symtabs *s, uintptr_t addr, bool return_address, char *out, size_t n) {
  uintptr_t off;
  const char *name = tm_symtabs_lookup(s, addr, return_address, &off);
  const tm_module *mod = tm_maps_module_of(s->maps, return_address ? addr - 1 : addr);
  if (name && mod) {
    snprintf(out, n, "%s!%s+0x%lx", tm_module_name(mod), name, (unsigned long)off);
    return;
  }
  if (mod) {
    snprintf(out, n, "%s+0x%lx", tm_module_name(mod), (unsigned long)(addr - mod->base));
    return;
  }
  const tm_mapping *mp = tm_maps_find(s->maps, addr);
  if (mp) snprintf(out, n, "%s+0x%lx", mp->name, (unsigned long)(addr - mp->start));
  else snprintf(out, n, "0x%lx", (unsigned long)addr);
}
