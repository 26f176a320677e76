/* Module segments (segments.h). */
#include "segments.h"

#include <link.h>

typedef struct segment_query {
  uintptr_t addr;
  size_t len;
  unsigned flags;
  bool found;
} segment_query;

static int find_segment(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  segment_query *q = arg;
  for (int i = 0; i < info->dlpi_phnum && !q->found; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)p->p_vaddr;
    if (p->p_type == PT_LOAD && (p->p_flags & q->flags) == q->flags && q->addr >= start &&
        q->addr - start <= (uintptr_t)p->p_memsz && q->len <= (uintptr_t)p->p_memsz - (q->addr - start))
      q->found = true;
  }
  return q->found;
}

bool tm_in_segment(uintptr_t a, size_t len, unsigned flags) {
  segment_query q = {a, len, flags, false};
  dl_iterate_phdr(find_segment, &q);
  return q.found;
}
