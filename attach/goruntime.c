/* A Go runtime's Ms, read from outside (goruntime.h). */
#include "goruntime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elffile.h"
#include "notes.h"
#include "remote.h"

/* A module built by Go's linker carries its build information here. */
static bool is_go_module(const tm_module *mod) {
  tm_elf_file f;
  if (!tm_module_open(mod, &f, NULL)) return false;
  size_t shstrndx;
  bool go = false;
  if (elf_getshdrstrndx(f.elf, &shstrndx) == 0)
    for (Elf_Scn *scn = NULL; !go && (scn = elf_nextscn(f.elf, scn)) != NULL;) {
      GElf_Shdr sh;
      const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(f.elf, shstrndx, sh.sh_name) : NULL;
      go = name && !strcmp(name, ".go.buildinfo");
    }
  tm_elf_close(&f);
  return go;
}

static bool read_word(pid_t pid, uintptr_t addr, uint64_t *v) {
  return addr && tm_remote_read(pid, addr, v, sizeof *v) == (ssize_t)sizeof *v;
}

static uint64_t field(const unsigned char *m, long off) {
  uint64_t v = 0;
  if (off >= 0) memcpy(&v, m + off, sizeof v);
  return v;
}

/* The goid of the runtime.g at g, 0 when unknown. */
static uint64_t goid_of(pid_t pid, const tm_go_layout *l, uint64_t g) {
  uint64_t id;
  return g && l->g_goid >= 0 && read_word(pid, (uintptr_t)g + (uintptr_t)l->g_goid, &id) ? id : 0;
}

void tm_go_runtime_walk(pid_t pid, const tm_go_reader *r, tm_symtabs *syms, tm_go_runtime *out) {
  memset(out, 0, sizeof *out);
  out->found = r->found;
  snprintf(out->why, sizeof out->why, "%s", r->why);
  if (!r->ready) return;
  const tm_go_layout *l = &r->layout;
  long fields[] = {l->m_procid, l->m_id, l->m_alllink, l->m_curg, l->m_lockedg, l->m_mstartfn};
  size_t span = 0; /* the bytes of an M the walk reads */
  for (size_t k = 0; k < sizeof fields / sizeof *fields; k++)
    if (fields[k] >= 0 && (size_t)fields[k] + 8 > span) span = (size_t)fields[k] + 8;
  unsigned char *buf = malloc(span);
  uint64_t m;
  if (!buf || !read_word(pid, r->allm, &m)) {
    snprintf(out->why, sizeof out->why, "runtime.allm could not be read");
    free(buf);
    return;
  }
  for (; m && out->nms < TM_GO_MS_MAX; m = field(buf, l->m_alllink)) {
    if (tm_remote_read(pid, (uintptr_t)m, buf, span) != (ssize_t)span) break;
    if (out->nms % 64 == 0) {
      tm_go_m *grown = realloc(out->ms, (out->nms + 64) * sizeof *grown);
      if (!grown) break;
      out->ms = grown;
    }
    tm_go_m *gm = &out->ms[out->nms++];
    memset(gm, 0, sizeof *gm);
    gm->tid = (pid_t)field(buf, l->m_procid);
    gm->id = (int64_t)field(buf, l->m_id);
    gm->goid = goid_of(pid, l, field(buf, l->m_curg));
    gm->locked_goid = goid_of(pid, l, field(buf, l->m_lockedg));
    /* A func value points at a funcval whose first word is the code. */
    uint64_t pc;
    uintptr_t off;
    const char *fn;
    if (read_word(pid, (uintptr_t)field(buf, l->m_mstartfn), &pc) &&
        (fn = tm_symtabs_lookup(syms, (uintptr_t)pc, false, &off)) != NULL && off == 0) {
      snprintf(gm->start, sizeof gm->start, "%s", fn);
      tm_printable(gm->start);
    }
  }
  out->read = true;
  free(buf);
}

void tm_go_reader_open(const tm_maps *maps, tm_symtabs *syms, tm_go_reader *r) {
  memset(r, 0, sizeof *r);
  for (size_t i = 0; i < maps->nmodules && !r->found; i++) {
    const tm_module *mod = &maps->modules[i];
    if (!is_go_module(mod)) continue;
    r->found = true;
    if (!tm_symtabs_address(syms, i, "runtime.allm", &r->allm)) {
      snprintf(r->why, sizeof r->why,
               "%s has no symbol runtime.allm (stripped?): its threads are not named",
               tm_module_name(mod));
      break;
    }
    tm_elf_file f;
    const char *why = "it cannot be read";
    bool laid_out = tm_module_open(mod, &f, NULL);
    if (laid_out) {
      laid_out = tm_go_layout_read(f.elf, &r->layout, &why);
      tm_elf_close(&f);
    }
    if (!laid_out)
      snprintf(r->why, sizeof r->why, "%s: %s: its threads are not named", tm_module_name(mod),
               why);
    r->ready = laid_out;
  }
  tm_printable(r->why);
}

void tm_go_runtime_read(pid_t pid, const tm_maps *maps, tm_symtabs *syms, tm_go_runtime *out) {
  tm_go_reader r;
  tm_go_reader_open(maps, syms, &r);
  tm_go_runtime_walk(pid, &r, syms, out);
}

void tm_go_runtime_free(tm_go_runtime *g) {
  free(g->ms);
  g->ms = NULL;
  g->nms = 0;
}

const tm_go_m *tm_go_m_of(const tm_go_runtime *g, pid_t tid) {
  for (size_t i = 0; tid && i < g->nms; i++)
    if (g->ms[i].tid == tid) return &g->ms[i];
  return NULL;
}

const char *tm_go_m_role(const tm_go_m *m) {
  if (!strcmp(m->start, "runtime.sysmon")) return "sysmon";
  if (!strcmp(m->start, "runtime.templateThread")) return "template thread";
  return NULL;
}
