/* A target's modules from /proc/PID/maps (maps.h). */
#include "maps.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const deleted_suffix = " (deleted)";

/* Load bias and build-id from the module's file: the PT_LOAD that starts
 * at file offset `offset` was mapped at `start`. */
static void read_elf(tm_module *mod, uintptr_t start, uint64_t offset) {
  mod->bias = start - offset; /* a fair guess when the file cannot be read */
  int fd = open(mod->open_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
  size_t n;
  if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
    for (size_t i = 0; i < n; i++) {
      GElf_Phdr ph;
      if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD) continue;
      uint64_t page_off = ph.p_offset & ~(uint64_t)4095;
      if (page_off == offset) {
        mod->bias = start - (uintptr_t)(ph.p_vaddr & ~(uint64_t)4095);
        break;
      }
    }
    const void *id;
    ssize_t len = dwelf_elf_gnu_build_id(e, &id);
    if (len > 0 && (size_t)len <= sizeof mod->build_id) {
      memcpy(mod->build_id, id, (size_t)len);
      mod->build_id_len = (size_t)len;
    }
  }
  if (e) elf_end(e);
  close(fd);
}

static int module_index(tm_maps *m, const char *path, uintptr_t start, uint64_t offset) {
  for (size_t i = 0; i < m->nmodules; i++)
    if (!strcmp(m->modules[i].path, path)) {
      tm_module *mod = &m->modules[i];
      if (offset == 0 && start < mod->base) mod->base = start;
      return (int)i;
    }
  tm_module *grown = realloc(m->modules, (m->nmodules + 1) * sizeof *grown);
  if (!grown) return -1;
  m->modules = grown;
  tm_module *mod = &m->modules[m->nmodules];
  memset(mod, 0, sizeof *mod);
  mod->path = strdup(path);
  char open_path[4200];
  snprintf(open_path, sizeof open_path, "/proc/%d/root%s", (int)m->pid, path);
  mod->open_path = strdup(open_path);
  if (!mod->path || !mod->open_path) {
    free(mod->path);
    free(mod->open_path);
    return -1;
  }
  mod->base = start;
  read_elf(mod, start, offset);
  return (int)m->nmodules++;
}

bool tm_maps_load(pid_t pid, tm_maps *m) {
  memset(m, 0, sizeof *m);
  m->pid = pid;
  elf_version(EV_CURRENT);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f) return false;
  char line[4352];
  size_t cap = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long start, end, offset;
    char perms[5];
    int name_at = 0;
    if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %n", &start, &end, perms, &offset, &name_at) < 4)
      continue;
    char *name = line + name_at;
    name[strcspn(name, "\n")] = 0;
    size_t nl = strlen(name), dl = strlen(deleted_suffix);
    if (nl > dl && !strcmp(name + nl - dl, deleted_suffix)) name[nl - dl] = 0;
    if (m->nmaps == cap) {
      cap = cap ? 2 * cap : 64;
      tm_mapping *grown = realloc(m->maps, cap * sizeof *grown);
      if (!grown) break;
      m->maps = grown;
    }
    tm_mapping *mp = &m->maps[m->nmaps++];
    *mp = (tm_mapping){(uintptr_t)start, (uintptr_t)end, offset, perms[0] == 'r', perms[2] == 'x',
                       perms[1] == 'w', -1, ""};
    if (name[0] == '/') mp->module = module_index(m, name, mp->start, offset);
    else snprintf(mp->name, sizeof mp->name, "%s", name[0] ? name : "[anon]");
  }
  fclose(f);
  return true;
}

void tm_maps_free(tm_maps *m) {
  for (size_t i = 0; i < m->nmodules; i++) {
    free(m->modules[i].path);
    free(m->modules[i].open_path);
  }
  free(m->modules);
  free(m->maps);
  memset(m, 0, sizeof *m);
}

const tm_mapping *tm_maps_find(const tm_maps *m, uintptr_t addr) {
  size_t lo = 0, hi = m->nmaps;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (addr < m->maps[mid].start) hi = mid;
    else if (addr >= m->maps[mid].end) lo = mid + 1;
    else return &m->maps[mid];
  }
  return NULL;
}

const tm_module *tm_maps_module_of(const tm_maps *m, uintptr_t addr) {
  const tm_mapping *mp = tm_maps_find(m, addr);
  if (mp && mp->module >= 0) return &m->modules[mp->module];
  /* A module's .bss continues in an anonymous mapping right after its
   * last file mapping. */
  if (mp && mp->write && mp > m->maps && mp[-1].module >= 0 && mp[-1].end == mp->start &&
      mp[-1].write)
    return &m->modules[mp[-1].module];
  return NULL;
}

const char *tm_module_name(const tm_module *mod) {
  const char *s = strrchr(mod->path, '/');
  return s ? s + 1 : mod->path;
}
