/* ELF symbol tables of a target's modules (elfsyms.h). */
#include "elfsyms.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elffile.h"

typedef struct sym {
  uint64_t addr, size; /* link-time */
  char *name;
} sym;

typedef struct table {
  bool loaded;
  sym *syms;
  size_t count;
  size_t bytes; /* of the names */
} table;

struct tm_symtabs {
  const tm_maps *maps;
  table *tables; /* one per module */
  size_t bytes;  /* all tables' symbols and names */
};

static int by_addr(const void *a, const void *b) {
  const sym *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A module's table may take this much (its symbols and their names): a
 * large real one, a browser's with debug symbols, takes a tenth of it. */
#define TABLE_BYTES_MAX (256u << 20)
/* And all of them: a target may map thousands of files. */
#define ALL_TABLES_BYTES_MAX (512u << 20)
/* Names are cut here: the longest C++ or Rust name a pattern needs is far
 * shorter, and a crafted string table may name every symbol with the
 * same megabyte. */
#define NAME_MAX_LEN 1024

/* Appends the FUNC and OBJECT symbols of every section of `type`; the
 * count added. */
static size_t add_section(const char *path, Elf *e, Elf64_Word type, table *t, tm_notes *notes) {
  size_t added = 0;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != type) continue;
    Elf_Data *d = elf_getdata(scn, NULL);
    size_t entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
    if (!d || entsize == 0) continue;
    /* What the section's data holds, not what its header claims. */
    size_t n = d->d_size / entsize;
    if (n == 0) continue; /* realloc(syms, 0) would free them and return NULL */
    if (n > INT_MAX || n > (TABLE_BYTES_MAX - t->bytes) / sizeof *t->syms - t->count) {
      tm_note(notes, "%s: a symbol table of %zu entries, past the %u MiB a module may take: "
              "skipped", path, n, TABLE_BYTES_MAX >> 20);
      continue;
    }
    sym *grown = realloc(t->syms, (t->count + n) * sizeof *grown);
    if (!grown) return added;
    t->syms = grown;
    for (size_t i = 0; i < n; i++) {
      GElf_Sym s;
      if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || s.st_value == 0) continue;
      int kind = GELF_ST_TYPE(s.st_info);
      if (kind != STT_FUNC && kind != STT_OBJECT) continue;
      const char *name = elf_strptr(e, sh.sh_link, s.st_name);
      if (!name || !*name) continue;
      /* A debug file's .symtab names versions too: pthread_mutex_lock@@GLIBC_2.2.5. */
      size_t len = strcspn(name, "@");
      if (len > NAME_MAX_LEN) len = NAME_MAX_LEN;
      if (t->bytes + (t->count + 1) * sizeof *t->syms + len + 1 > TABLE_BYTES_MAX) {
        tm_note(notes, "%s: symbol names past the %u MiB a module may take: skipped", path,
                TABLE_BYTES_MAX >> 20);
        return added;
      }
      char *copy = strndup(name, len);
      if (!copy) continue;
      t->bytes += len + 1;
      t->syms[t->count++] = (sym){s.st_value, s.st_size, copy};
      added++;
    }
  }
  return added;
}

/* A module's own file (mod set: opened as tm_module_open checks it), or a
 * separate debug file of ours, by path. */
static size_t load_file(const tm_module *mod, const char *path, Elf64_Word type, table *t,
                        tm_notes *notes) {
  tm_elf_file f;
  if (mod ? !tm_module_open(mod, &f, notes) : !tm_elf_open(path, &f, notes)) return 0;
  size_t n = add_section(path, f.elf, type, t, notes);
  tm_elf_close(&f);
  return n;
}

static void load(tm_symtabs *s, const tm_module *mod, table *t, tm_notes *notes) {
  t->loaded = true;
  if (s->bytes >= ALL_TABLES_BYTES_MAX) {
    tm_note(notes, "%s: symbols not read, the modules before it took %u MiB", mod->path,
            ALL_TABLES_BYTES_MAX >> 20);
    return;
  }
  if (load_file(mod, mod->path, SHT_SYMTAB, t, notes) == 0 && mod->build_id_len >= 2) {
    char dbg[160];
    int w = snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%02x/", mod->build_id[0]);
    for (size_t k = 1; k < mod->build_id_len; k++)
      w += snprintf(dbg + w, sizeof dbg - (size_t)w, "%02x", mod->build_id[k]);
    snprintf(dbg + w, sizeof dbg - (size_t)w, ".debug");
    load_file(NULL, dbg, SHT_SYMTAB, t, notes);
  }
  load_file(mod, mod->path, SHT_DYNSYM, t, notes);
  s->bytes += t->bytes + t->count * sizeof *t->syms;
  if (t->count) qsort(t->syms, t->count, sizeof *t->syms, by_addr); /* NULL, 0: undefined */
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
  if (!t->loaded) load(s, mod, t, s->maps->notes);
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

bool tm_symtabs_address(tm_symtabs *s, size_t module, const char *name, uintptr_t *addr) {
  if (module >= s->maps->nmodules) return false;
  const tm_module *mod = &s->maps->modules[module];
  table *t = &s->tables[module];
  if (!t->loaded) load(s, mod, t, s->maps->notes);
  /* By address order only: a name is looked up once per look, not per frame. */
  for (size_t k = 0; k < t->count; k++)
    if (!strcmp(t->syms[k].name, name)) {
      *addr = (uintptr_t)(t->syms[k].addr + mod->bias);
      return true;
    }
  return false;
}

static void format(tm_symtabs *s, uintptr_t addr, bool return_address, char *out, size_t n);

void tm_symtabs_format(tm_symtabs *s, uintptr_t addr, bool return_address, char *out, size_t n) {
  format(s, addr, return_address, out, n);
  tm_printable(out);
}

static void format(tm_symtabs *s, uintptr_t addr, bool return_address, char *out, size_t n) {
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
