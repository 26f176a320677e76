#include "symbolize.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "threadmon.pb-c.h"

typedef struct sym_entry {
  uintptr_t addr; /* link-time value */
  uint64_t size;
  uint32_t name;  /* offset in names */
  /* Local data symbols: the source file (STT_FILE) they follow, offset in
   * names, 0 = none. Shown when the name is not unique: glibc has many a
   * static "lock", random.c's is the one behind rand(). */
  uint32_t file;
} sym_entry;

typedef struct module_syms {
  uintptr_t bias; /* runtime address = addr + bias */
  uintptr_t base; /* dli_fbase, the cache key */
  char *path;     /* its file, for readers' file:line */
  uint8_t build_id[TM_BUILD_ID_MAX];
  size_t build_id_len;
  sym_entry *syms;
  size_t count;
  char *names;
  struct module_syms *next;
} module_syms;

static module_syms *modules;

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static int by_addr(const void *a, const void *b) {
  const sym_entry *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

typedef struct elf_image {
  const uint8_t *data;
  size_t size;
} elf_image;

static bool elf_map(const char *path, elf_image *img) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(Elf64_Ehdr);
  void *p = ok ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (p == MAP_FAILED) return false;
  img->data = p;
  img->size = (size_t)st.st_size;
  const Elf64_Ehdr *eh = p;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shoff == 0 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > img->size) {
    munmap(p, img->size);
    return false;
  }
  return true;
}

static const Elf64_Shdr *sections(const elf_image *img, unsigned *n) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->data;
  *n = eh->e_shnum;
  return (const Elf64_Shdr *)(img->data + eh->e_shoff);
}

/* Copies FUNC and OBJECT symbols of the table of type (SHT_SYMTAB or
 * SHT_DYNSYM) into m. False when there is none. */
static bool load_symtab(const elf_image *img, module_syms *m, uint32_t type_wanted) {
  unsigned n;
  const Elf64_Shdr *sh = sections(img, &n);
  for (unsigned i = 0; i < n; i++) {
    if (sh[i].sh_type != type_wanted || sh[i].sh_link >= n) continue;
    const Elf64_Shdr *str = &sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > img->size || str->sh_offset + str->sh_size > img->size)
      return false;
    const Elf64_Sym *sym = (const Elf64_Sym *)(img->data + sh[i].sh_offset);
    size_t count = sh[i].sh_size / sizeof *sym;
    const char *strtab = (const char *)img->data + str->sh_offset;
    m->syms = malloc(count * sizeof *m->syms);
    m->names = malloc(str->sh_size + 1);
    if (!m->syms || !m->names) return false;
    memcpy(m->names, strtab, str->sh_size);
    m->names[str->sh_size] = 0;
    uint32_t file = 0;
    for (size_t k = 0; k < count; k++) {
      int type = ELF64_ST_TYPE(sym[k].st_info);
      if (sym[k].st_name >= str->sh_size) continue;
      if (type == STT_FILE) file = sym[k].st_name;
      if (ELF64_ST_BIND(sym[k].st_info) != STB_LOCAL) file = 0; /* locals come first */
      if ((type != STT_FUNC && type != STT_OBJECT) || sym[k].st_shndx == SHN_UNDEF) continue;
      m->syms[m->count++] = (sym_entry){sym[k].st_value, sym[k].st_size, sym[k].st_name,
                                        type == STT_OBJECT ? file : 0};
    }
    qsort(m->syms, m->count, sizeof *m->syms, by_addr);
    return m->count > 0;
  }
  return false;
}

/* The GNU build-id note's bytes into out; their count, 0 when none. */
static size_t build_id(const elf_image *img, uint8_t *out, size_t cap) {
  unsigned n;
  const Elf64_Shdr *sh = sections(img, &n);
  for (unsigned i = 0; i < n; i++) {
    if (sh[i].sh_type != SHT_NOTE || sh[i].sh_offset + sh[i].sh_size > img->size) continue;
    const uint8_t *p = img->data + sh[i].sh_offset, *end = p + sh[i].sh_size;
    while (p + sizeof(Elf64_Nhdr) <= end) {
      const Elf64_Nhdr *nh = (const Elf64_Nhdr *)p;
      const uint8_t *name = p + sizeof *nh;
      const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
      if (desc + nh->n_descsz > end) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
          nh->n_descsz >= 2 && nh->n_descsz <= cap) {
        memcpy(out, desc, nh->n_descsz);
        return nh->n_descsz;
      }
      p = desc + ((nh->n_descsz + 3) & ~3u);
    }
  }
  return 0;
}

/* "/usr/lib/debug/.build-id/xx/yyyy.debug" for a build-id. */
static bool debug_path(const uint8_t *id, size_t len, char *out, size_t outn) {
  if (len < 2) return false;
  int w = snprintf(out, outn, "/usr/lib/debug/.build-id/%02x/", id[0]);
  for (size_t k = 1; k < len && w > 0 && (size_t)w + 3 < outn; k++)
    w += snprintf(out + w, outn - (size_t)w, "%02x", id[k]);
  return w > 0 && (size_t)w + 7 < outn && snprintf(out + w, outn - (size_t)w, ".debug") > 0;
}

static void drop_syms(module_syms *m) {
  free(m->syms);
  free(m->names);
  m->syms = NULL;
  m->names = NULL;
  m->count = 0;
}

static module_syms *module_for(const char *path, uintptr_t base, uintptr_t bias) {
  for (module_syms *m = modules; m; m = m->next)
    if (m->base == base) return m;
  module_syms *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->base = base;
  m->bias = bias;
  /* The main program is "/proc/self/exe" here: readers need its name. */
  char real[4096];
  ssize_t len = strcmp(path, "/proc/self/exe") ? -1 : readlink(path, real, sizeof real - 1);
  if (len > 0) real[len] = 0;
  m->path = strdup(len > 0 ? real : path);
  elf_image img;
  if (elf_map(path, &img)) {
    m->build_id_len = build_id(&img, m->build_id, sizeof m->build_id);
    if (!load_symtab(&img, m, SHT_SYMTAB)) {
      drop_syms(m);
      char dbg[256];
      elf_image d;
      bool debug = debug_path(m->build_id, m->build_id_len, dbg, sizeof dbg) && elf_map(dbg, &d);
      if (debug) {
        if (!load_symtab(&d, m, SHT_SYMTAB)) drop_syms(m);
        munmap((void *)d.data, d.size);
      }
      /* Stripped, no debug file: the dynamic symbols, as dladdr would
       * give (mariadbd exports 29,000). */
      if (!m->count && !load_symtab(&img, m, SHT_DYNSYM)) drop_syms(m);
    }
    munmap((void *)img.data, img.size);
  }
  m->next = modules;
  modules = m;
  return m;
}

/* Of the aliases of syms[at] (same address), the one a program calls:
 * fewest leading underscores (glibc's fprintf, not _IO_fprintf). */
static const sym_entry *public_alias(const module_syms *m, const sym_entry *s, size_t at) {
  const sym_entry *best = s;
  size_t best_rank = strspn(m->names + s->name, "_");
  for (size_t k = at; k > 0 && m->syms[k - 1].addr == s->addr; k--) {
    size_t rank = strspn(m->names + m->syms[k - 1].name, "_");
    if (rank < best_rank) best = &m->syms[k - 1], best_rank = rank;
  }
  for (size_t k = at + 1; k < m->count && m->syms[k].addr == s->addr; k++) {
    size_t rank = strspn(m->names + m->syms[k].name, "_");
    if (rank < best_rank) best = &m->syms[k], best_rank = rank;
  }
  return best;
}

/* The symbol whose [addr, addr+size) holds a, or the nearest function
 * below it when sizes are missing. */
static const sym_entry *lookup(const module_syms *m, uintptr_t a) {
  size_t lo = 0, hi = m->count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->syms[mid].addr <= a) lo = mid + 1;
    else hi = mid;
  }
  /* Candidates at or below a; aliases share an address, so look a little
   * further down for one whose size covers a. */
  for (size_t k = lo, tries = 0; k > 0 && tries < 8; k--, tries++) {
    const sym_entry *s = &m->syms[k - 1];
    if (a < s->addr + (s->size ? s->size : 1)) return public_alias(m, s, k - 1);
  }
  return NULL;
}

/* /proc/self/maps, parsed and kept: naming each heap lock by a read of
 * the whole file took the probe's thread 3 s for a program that made
 * 57,000 of them. Read again when an address is in no kept region, or when
 * the copy is older than MAPS_KEEP_NS (a region unmapped and mapped again
 * as something else). Only the sampler's thread names objects. */
#define MAPS_KEEP_NS 1000000000ull
typedef struct map_region {
  uintptr_t lo, hi, off;
  uint32_t name; /* offset in maps_kept.names */
} map_region;
static struct {
  map_region *r;
  size_t n, cap;
  char *names;
  size_t names_len, names_cap;
  uint64_t read_ns;
} maps_kept;

static bool maps_add(uintptr_t lo, uintptr_t hi, uintptr_t off, const char *name) {
  size_t len = strlen(name) + 1;
  if (maps_kept.n == maps_kept.cap) {
    size_t cap = maps_kept.cap ? maps_kept.cap * 2 : 256;
    map_region *r = realloc(maps_kept.r, cap * sizeof *r);
    if (!r) return false;
    maps_kept.r = r;
    maps_kept.cap = cap;
  }
  if (maps_kept.names_len + len > maps_kept.names_cap) {
    size_t cap = maps_kept.names_cap ? maps_kept.names_cap * 2 : 16384;
    while (cap < maps_kept.names_len + len) cap *= 2;
    char *names = realloc(maps_kept.names, cap);
    if (!names) return false;
    maps_kept.names = names;
    maps_kept.names_cap = cap;
  }
  memcpy(maps_kept.names + maps_kept.names_len, name, len);
  maps_kept.r[maps_kept.n++] = (map_region){lo, hi, off, (uint32_t)maps_kept.names_len};
  maps_kept.names_len += len;
  return true;
}

static void maps_read(void) {
  maps_kept.n = maps_kept.names_len = 0;
  maps_kept.read_ns = tm_now_ns();
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi, off;
    int name_at = 0;
    if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &lo, &hi, &off, &name_at) < 3) continue;
    char *name = line + name_at;
    name[strcspn(name, "\n")] = 0;
    if (!maps_add(lo, hi, off, name)) break;
  }
  fclose(f);
}

/* The kept region holding addr (the file lists them in address order). */
static const map_region *maps_find(uintptr_t addr) {
  size_t lo = 0, hi = maps_kept.n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (maps_kept.r[mid].hi <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < maps_kept.n && maps_kept.r[lo].lo <= addr ? &maps_kept.r[lo] : NULL;
}

static bool from_maps(uintptr_t addr, tm_symbol *out) {
  const map_region *r = NULL;
  if (tm_now_ns() - maps_kept.read_ns < MAPS_KEEP_NS) r = maps_find(addr);
  if (!r) {
    maps_read();
    r = maps_find(addr);
  }
  if (!r) return false;
  const char *name = maps_kept.names + r->name;
  if (!*name)
    name = "[anon]";
  else if (!strncmp(name, "[stack", 6))
    name = "[stack]";
  snprintf(out->module, sizeof out->module, "%s", name[0] == '[' ? name : base_name(name));
  out->module_offset = addr - r->lo + (name[0] == '/' ? r->off : 0);
  return true;
}

/* Another symbol of the module has the same name: the source file tells
 * them apart. Once per object described, so a scan is fine. */
static bool name_ambiguous(const module_syms *m, const sym_entry *s) {
  const char *name = m->names + s->name;
  for (size_t k = 0; k < m->count; k++)
    if (&m->syms[k] != s && m->syms[k].addr != s->addr && !strcmp(m->names + m->syms[k].name, name))
      return true;
  return false;
}

/* The loaded module one of whose PT_LOAD segments holds an address, as
 * dladdr finds it, without dladdr's symbol search: glibc's looks at every
 * dynamic symbol of the module, which for mariadbd's 29,000 took 90% of
 * the probe's thread under sysbench (a few ms per address, several
 * addresses per new lock or stack). The symbols come from our sorted
 * tables instead, .dynsym among them. */
typedef struct module_query {
  uintptr_t addr;
  const char *name; /* "" for the main program */
  uintptr_t bias;   /* l_addr */
  uintptr_t base;   /* l_map_start: the lowest segment's page */
  bool found;
} module_query;

static int find_module(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  module_query *q = arg;
  uintptr_t lowest = UINTPTR_MAX;
  bool inside = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD) continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)p->p_vaddr;
    if (start < lowest) lowest = start;
    if (q->addr >= start && q->addr - start < (uintptr_t)p->p_memsz) inside = true;
  }
  if (!inside) return 0;
  q->name = info->dlpi_name ? info->dlpi_name : "";
  q->bias = (uintptr_t)info->dlpi_addr;
  q->base = lowest & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
  q->found = true;
  return 1;
}

int tm_symbolize(uintptr_t addr, tm_symbol *out) {
  memset(out, 0, sizeof *out);
  module_query q = {addr, NULL, 0, 0, false};
  if (addr) dl_iterate_phdr(find_module, &q);
  if (q.found) {
    /* The main program has no name here; argv[0] may be relative
     * (build/prog: no reader found its file or lines). */
    const char *path = q.name[0] ? q.name : "/proc/self/exe";
    snprintf(out->module, sizeof out->module, "%s",
             q.name[0] ? base_name(q.name) : base_name(program_invocation_name));
    out->module_offset = addr - q.base;
    module_syms *m = module_for(path, q.base, q.bias);
    if (m) out->where = (tm_code_location){m->path, addr - m->bias, m->build_id, m->build_id_len};
    const sym_entry *s = m ? lookup(m, addr - m->bias) : NULL;
    if (s && s->file && name_ambiguous(m, s)) {
      snprintf(out->symbol, sizeof out->symbol, "%s+0x%lx (%s)", m->names + s->name,
               (unsigned long)(addr - m->bias - s->addr), m->names + s->file);
    } else if (s) {
      snprintf(out->symbol, sizeof out->symbol, "%s+0x%lx", m->names + s->name,
               (unsigned long)(addr - m->bias - s->addr));
    } else if (!m || !m->count) {
      /* No file to read (the vdso): its few dynamic symbols, by dladdr. */
      Dl_info info;
      if (dladdr((void *)addr, &info) && info.dli_sname && info.dli_saddr)
        snprintf(out->symbol, sizeof out->symbol, "%s+0x%lx", info.dli_sname,
                 (unsigned long)(addr - (uintptr_t)info.dli_saddr));
    }
    return 0;
  }
  return addr && from_maps(addr, out) ? 0 : -1;
}

void tm_symbolize_format(uintptr_t addr, char *out, size_t n) {
  tm_symbol s;
  if (tm_symbolize(addr, &s) < 0) snprintf(out, n, "0x%lx", (unsigned long)addr);
  else if (s.symbol[0]) snprintf(out, n, "%s!%s", s.module, s.symbol);
  else snprintf(out, n, "%s+0x%lx", s.module, (unsigned long)s.module_offset);
}

void tm_symbolize_frame(uintptr_t pc, bool return_address, char *out, size_t n,
                        tm_code_location *where) {
  /* A return address may be the first byte after a call that ends its
   * function (noreturn callee): look up the call instruction instead. */
  uintptr_t at = return_address && pc ? pc - 1 : pc;
  tm_symbol s;
  int found = tm_symbolize(at, &s);
  if (where) *where = found < 0 ? (tm_code_location){0} : s.where;
  if (found < 0) {
    snprintf(out, n, "0x%lx", (unsigned long)pc);
    return;
  }
  char *plus = strrchr(s.symbol, '+');
  if (s.symbol[0] && plus) {
    *plus = 0;
    unsigned long off = strtoul(plus + 1, NULL, 16) + (unsigned long)(pc - at);
    snprintf(out, n, "%s!%s+0x%lx", s.module, s.symbol, off);
  } else {
    snprintf(out, n, "%s+0x%lx", s.module, (unsigned long)(s.module_offset + (pc - at)));
  }
}

void tm_code_location_message(const tm_code_location *where, Threadmon__CodeLocation *m) {
  threadmon__code_location__init(m);
  if (!where->path) return;
  m->module_path = (char *)where->path;
  m->address = where->address;
  m->build_id.data = (uint8_t *)where->build_id;
  m->build_id.len = where->build_id_len;
}

