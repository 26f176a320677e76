/* A target's modules from /proc/PID/maps (maps.h). */
#include "maps.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elffile.h"

static const char *const deleted_suffix = " (deleted)";

/* Load bias and build-id from the module's file: the PT_LOAD that starts
 * at file offset `offset` was mapped at `start`. */
static void read_elf(tm_module *mod, uintptr_t start, uint64_t offset, tm_notes *notes) {
  mod->bias = start - offset; /* a fair guess when the file cannot be read */
  tm_elf_file f;
  if (!tm_module_open(mod, &f, notes)) return;
  size_t n;
  if (elf_getphdrnum(f.elf, &n) == 0) {
    for (size_t i = 0; i < n && i <= INT_MAX; i++) {
      GElf_Phdr ph;
      if (!gelf_getphdr(f.elf, (int)i, &ph)) break; /* past the file's end */
      if (ph.p_type != PT_LOAD) continue;
      uint64_t page_off = ph.p_offset & ~(uint64_t)4095;
      if (page_off == offset) {
        mod->bias = start - (uintptr_t)(ph.p_vaddr & ~(uint64_t)4095);
        break;
      }
    }
  }
  const void *id;
  ssize_t len = dwelf_elf_gnu_build_id(f.elf, &id);
  if (len > 0 && (size_t)len <= sizeof mod->build_id) {
    memcpy(mod->build_id, id, (size_t)len);
    mod->build_id_len = (size_t)len;
  }
  tm_elf_close(&f);
}

bool tm_module_open(const tm_module *mod, tm_elf_file *f, tm_notes *notes) {
  f->elf = NULL;
  f->fd = -1;
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  /* The mapping itself: whatever the name leads to now. */
  int fd = mod->map_path ? open(mod->map_path, flags) : -1;
  if (fd >= 0) return tm_elf_open_fd(fd, mod->path, mod->dev, mod->ino, f, notes);
  /* Through the target's root: the name is the target's to point anywhere,
   * so only the mapped inode is read (its device and inode from maps). A
   * mapping with neither known (not from a real maps file) is not read. */
  if (!mod->dev && !mod->ino) return false;
  fd = open(mod->open_path, flags | O_NOFOLLOW);
  if (fd < 0) return false;
  return tm_elf_open_fd(fd, mod->path, mod->dev, mod->ino, f, notes);
}

static int module_index(tm_maps *m, const char *path, const tm_mapping *at, dev_t dev,
                        ino_t ino) {
  uintptr_t start = at->start;
  uint64_t offset = at->offset;
  /* From the last: a file's mappings are next to each other. */
  for (size_t i = m->nmodules; i-- > 0;)
    if (!strcmp(m->modules[i].path, path)) {
      tm_module *mod = &m->modules[i];
      if (offset == 0 && start < mod->base) mod->base = start;
      return (int)i;
    }
  if (m->nmodules == TM_MAPS_MODULES_MAX) {
    if (m->nmodules_skipped++ == 0)
      tm_note(m->notes, "maps: more than %d files mapped; %s and those after it are not read",
              TM_MAPS_MODULES_MAX, path);
    return -1;
  }
  tm_module *grown = realloc(m->modules, (m->nmodules + 1) * sizeof *grown);
  if (!grown) return -1;
  m->modules = grown;
  tm_module *mod = &m->modules[m->nmodules];
  memset(mod, 0, sizeof *mod);
  mod->path = strdup(path);
  size_t open_len = strlen(path) + sizeof "/proc/2147483647/root";
  mod->open_path = malloc(open_len);
  if (mod->open_path) snprintf(mod->open_path, open_len, "/proc/%d/root%s", (int)m->pid, path);
  char map_path[80];
  snprintf(map_path, sizeof map_path, "/proc/%d/map_files/%lx-%lx", (int)m->pid,
           (unsigned long)at->start, (unsigned long)at->end);
  mod->map_path = strdup(map_path);
  mod->dev = dev;
  mod->ino = ino;
  if (!mod->path || !mod->open_path || !mod->map_path) {
    free(mod->path);
    free(mod->open_path);
    free(mod->map_path);
    return -1;
  }
  mod->base = start;
  read_elf(mod, start, offset, m->notes);
  return (int)m->nmodules++;
}

/* Skips the rest of a line longer than the buffer: its tail is a path's,
 * the target's to choose, and must not pass for a line of its own. */
static void skip_line(FILE *f) {
  for (int c; (c = getc(f)) != EOF && c != '\n';) {
  }
}

/* One maps line into *mp and its name; false when it is not one. */
static bool parse_line(char *line, tm_mapping *mp, char **name, dev_t *dev, ino_t *ino) {
  unsigned long long start, end, offset, inode;
  unsigned major, minor;
  char perms[5];
  int name_at = 0;
  if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &offset, &major,
             &minor, &inode, &name_at) < 7 ||
      name_at == 0 || strlen(perms) != 4 || start >= end)
    return false;
  *dev = makedev(major, minor);
  *ino = (ino_t)inode;
  *name = line + name_at;
  (*name)[strcspn(*name, "\n")] = 0;
  size_t nl = strlen(*name), dl = strlen(deleted_suffix);
  if (nl > dl && !strcmp(*name + nl - dl, deleted_suffix)) (*name)[nl - dl] = 0;
  *mp = (tm_mapping){(uintptr_t)start, (uintptr_t)end, offset, perms[0] == 'r', perms[2] == 'x',
                     perms[1] == 'w', -1, ""};
  return true;
}

void tm_maps_read(FILE *f, pid_t pid, tm_maps *m, tm_notes *notes) {
  memset(m, 0, sizeof *m);
  m->pid = pid;
  m->notes = notes;
  elf_version(EV_CURRENT);
  char line[4352];
  size_t cap = 0, bad = 0, unordered = 0;
  while (fgets(line, sizeof line, f)) {
    size_t len = strlen(line);
    tm_mapping mp;
    char *name;
    dev_t dev;
    ino_t ino;
    /* A path longer than the buffer is cut: the line is not believed. */
    if (len > 0 && line[len - 1] != '\n' && !feof(f)) {
      skip_line(f);
      bad++;
      continue;
    }
    if (!parse_line(line, &mp, &name, &dev, &ino)) {
      bad++;
      continue;
    }
    /* Lookups are binary searches: the kernel writes mappings in address
     * order, a line that breaks it is not believed. */
    if (m->nmaps && mp.start < m->maps[m->nmaps - 1].end) {
      unordered++;
      continue;
    }
    if (m->nmaps == cap) {
      cap = cap ? 2 * cap : 64;
      tm_mapping *grown = realloc(m->maps, cap * sizeof *grown);
      if (!grown) break;
      m->maps = grown;
    }
    tm_mapping *at = &m->maps[m->nmaps++];
    *at = mp;
    if (name[0] == '/') at->module = module_index(m, name, at, dev, ino);
    else snprintf(at->name, sizeof at->name, "%s", name[0] ? name : "[anon]");
  }
  if (bad) tm_note(notes, "maps: %zu lines not understood, skipped", bad);
  if (unordered) tm_note(notes, "maps: %zu lines out of address order, skipped", unordered);
}

bool tm_maps_load(pid_t pid, tm_maps *m, tm_notes *notes) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f) {
    memset(m, 0, sizeof *m);
    return false;
  }
  tm_maps_read(f, pid, m, notes);
  fclose(f);
  return true;
}

void tm_maps_free(tm_maps *m) {
  for (size_t i = 0; i < m->nmodules; i++) {
    free(m->modules[i].path);
    free(m->modules[i].open_path);
    free(m->modules[i].map_path);
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
