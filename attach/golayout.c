/* runtime.m and runtime.g field offsets from a Go program's DWARF
 * (golayout.h). */
#include "golayout.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

/* Offsets past this are not believed (runtime.m is about 2 KiB). */
#define STRUCT_MAX (1u << 16)

typedef struct field {
  const char *name;
  long *at;
} field;

/* Reads the struct's size and the members named in fields[0..n). */
static void read_struct(Dwarf_Die *type, size_t *size, field *fields, size_t n) {
  Dwarf_Word bytes = 0;
  Dwarf_Attribute a;
  if (size && dwarf_attr(type, DW_AT_byte_size, &a) && dwarf_formudata(&a, &bytes) == 0 &&
      bytes < STRUCT_MAX)
    *size = (size_t)bytes;
  Dwarf_Die member;
  if (dwarf_child(type, &member) != 0) return;
  do {
    if (dwarf_tag(&member) != DW_TAG_member) continue;
    const char *name = dwarf_diename(&member);
    Dwarf_Word off;
    if (!name || !dwarf_attr(&member, DW_AT_data_member_location, &a) ||
        dwarf_formudata(&a, &off) != 0 || off >= STRUCT_MAX)
      continue;
    for (size_t k = 0; k < n; k++)
      if (!strcmp(name, fields[k].name)) *fields[k].at = (long)off;
  } while (dwarf_siblingof(&member, &member) == 0);
}

/* Looks through the top-level entries of units named `only` (NULL: every
 * unit) for runtime.m and runtime.g; true once both were seen. */
static bool scan(Dwarf *dw, const char *only, tm_go_layout *l) {
  field m_fields[] = {{"procid", &l->m_procid},   {"id", &l->m_id},
                      {"alllink", &l->m_alllink}, {"curg", &l->m_curg},
                      {"lockedg", &l->m_lockedg}, {"mstartfn", &l->m_mstartfn}};
  field g_fields[] = {{"goid", &l->g_goid}};
  bool have_m = false, have_g = false;
  Dwarf_Off off = 0, next;
  size_t header;
  while (!(have_m && have_g) && dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
    Dwarf_Die cu, die;
    const char *cu_name;
    if (dwarf_offdie(dw, off + header, &cu) && (!only || ((cu_name = dwarf_diename(&cu)) &&
                                                         !strcmp(cu_name, only))) &&
        dwarf_child(&cu, &die) == 0) {
      do {
        if (dwarf_tag(&die) != DW_TAG_structure_type) continue;
        const char *name = dwarf_diename(&die);
        if (!name) continue;
        if (!have_m && !strcmp(name, "runtime.m")) {
          read_struct(&die, &l->m_size, m_fields, sizeof m_fields / sizeof *m_fields);
          have_m = true;
        } else if (!have_g && !strcmp(name, "runtime.g")) {
          read_struct(&die, NULL, g_fields, 1);
          have_g = true;
        }
      } while (!(have_m && have_g) && dwarf_siblingof(&die, &die) == 0);
    }
    off = next;
  }
  return have_m;
}

bool tm_go_layout_read(Elf *elf, tm_go_layout *l, const char **why) {
  *l = (tm_go_layout){0, -1, -1, -1, -1, -1, -1, -1};
  Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
  if (!dw) {
    *why = "it has no DWARF (built with -ldflags=-w or -s, or stripped)";
    return false;
  }
  /* Go's linker puts the runtime's types in units named "runtime". */
  bool found = scan(dw, "runtime", l) || scan(dw, NULL, l);
  dwarf_end(dw);
  if (!found) {
    *why = "its DWARF has no runtime.m";
    return false;
  }
  if (l->m_procid < 0 || l->m_id < 0 || l->m_alllink < 0) {
    *why = "its runtime.m has no procid, id or alllink (a Go this reader does not know)";
    return false;
  }
  const long fields[] = {l->m_procid, l->m_id, l->m_alllink, l->m_curg, l->m_lockedg,
                         l->m_mstartfn};
  for (size_t k = 0; k < sizeof fields / sizeof *fields; k++)
    if (l->m_size && fields[k] >= 0 && (size_t)fields[k] + 8 > l->m_size) {
      *why = "its DWARF puts a field of runtime.m outside it";
      return false;
    }
  return true;
}
