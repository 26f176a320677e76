/* Call chains of blocked threads by stack scanning (stackscan.h). */
#include "stackscan.h"

#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "callchain.h"
#include "cfi.h"

#define COPY_BYTES 32768
#define PAGE 4096u
#define SEGMENTS_CAP 512

typedef struct segment {
  uintptr_t start, end;
} segment;

typedef struct segments {
  segment s[SEGMENTS_CAP];
  int n;
} segments;

static int add_segments(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  segments *out = arg;
  for (int i = 0; i < info->dlpi_phnum && out->n < SEGMENTS_CAP; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_X)) continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)p->p_vaddr;
    out->s[out->n++] = (segment){start, start + (uintptr_t)p->p_memsz};
  }
  return 0;
}

static const segment *segment_of(const segments *segs, uintptr_t a) {
  for (int i = 0; i < segs->n; i++)
    if (a >= segs->s[i].start && a < segs->s[i].end) return &segs->s[i];
  return NULL;
}

int tm_after_call(const unsigned char *r) {
  if (r[-5] == 0xE8) return 1;                                 /* call rel32 */
  if (r[-6] == 0xFF && r[-5] == 0x15) return 1;                /* call [rip+disp32] */
  if (r[-2] == 0xFF && (r[-1] & 0xF8) == 0xD0) return 1;       /* call reg */
  if ((r[-3] & 0xF0) == 0x40 && r[-2] == 0xFF && (r[-1] & 0xF8) == 0xD0) return 1;
  if (r[-2] == 0xFF && (r[-1] & 0xF8) == 0x10) return 1;       /* call [reg] */
  if (r[-3] == 0xFF && (r[-2] & 0xF8) == 0x50) return 1;       /* call [reg+disp8] */
  if (r[-4] == 0xFF && r[-3] == 0x54) return 1;                /* call [sib+disp8] */
  if (r[-6] == 0xFF && (r[-5] & 0xF8) == 0x90) return 1;       /* call [reg+disp32] */
  if (r[-7] == 0xFF && r[-6] == 0x94) return 1;                /* call [sib+disp32] */
  return 0;
}

static int read_syscall(uint32_t tid, char *buf, size_t n) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%u/syscall", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t r = read(fd, buf, n - 1);
  close(fd);
  if (r <= 0) return -1;
  buf[r] = 0;
  return 0;
}

/* "NR a0 a1 a2 a3 a4 a5 SP PC": the user stack pointer and PC. */
static int parse_sp_pc(const char *line, uintptr_t *sp, uintptr_t *pc) {
  const char *p = line;
  char *end;
  unsigned long long v[9];
  for (int i = 0; i < 9; i++) {
    v[i] = strtoull(p, &end, i == 0 ? 10 : 16);
    if (end == p) return -1;
    p = end;
  }
  *sp = (uintptr_t)v[7];
  *pc = (uintptr_t)v[8];
  return *sp && *pc ? 0 : -1;
}

ssize_t tm_copy_stack(uintptr_t sp, unsigned char *buf, size_t len) {
  /* One element per page: a copy stops at the first page that is not
   * mapped (the top of the stack) and keeps what came before. */
  struct iovec local = {buf, len}, remote[COPY_BYTES / PAGE + 1];
  unsigned long nr = 0;
  for (uintptr_t a = sp, left = len; left > 0 && nr < sizeof remote / sizeof *remote; nr++) {
    uintptr_t chunk = PAGE - (a & (PAGE - 1));
    if (chunk > left) chunk = left;
    remote[nr] = (struct iovec){(void *)a, chunk};
    a += chunk;
    left -= chunk;
  }
  return process_vm_readv(getpid(), &local, 1, remote, nr, 0);
}

int tm_stack_scan(uint32_t tid, const char *syscall_line, void **pcs, int max, int *exact) {
  uintptr_t sp, pc;
  if (max < 1 || parse_sp_pc(syscall_line, &sp, &pc) != 0 || (sp & 7)) return 0;

  static unsigned char copy[COPY_BYTES];
  ssize_t got = tm_copy_stack(sp, copy, COPY_BYTES);
  if (got < 8) return 0;

  /* Unchanged since the first read: it stayed in that call meanwhile. */
  char again[256];
  bool stayed = read_syscall(tid, again, sizeof again) == 0 && strcmp(again, syscall_line) == 0;

  static segments segs;
  segs.n = 0;
  dl_iterate_phdr(add_segments, &segs);
  int n = 0;
  pcs[n++] = (void *)pc;
  /* Exact frames first, while the modules' unwind tables describe them;
   * the scan goes on above the last one. */
  tm_stack_copy st = {sp, copy, (size_t)got};
  tm_cfi_regs regs = {pc, sp, 0, false};
  ssize_t from = 0;
  tm_cfi_walk walk = {0};
  for (bool ret = false; n < max && tm_cfi_step(&regs, ret, &st, &walk); ret = true) {
    const segment *s = segment_of(&segs, regs.ip);
    if (!s || regs.ip - s->start < 8 || !tm_after_call((const unsigned char *)regs.ip)) break;
    pcs[n++] = (void *)regs.ip;
    from = (ssize_t)(regs.sp - sp);
  }
  if (!stayed) {
    /* It left the call before the second read, perhaps only after the
     * copy. Unwound frames that are one chain of calls into the blocked
     * PC's function are the call it was in: once it goes on, its next call
     * writes another return address into the first slot, which leads
     * elsewhere. Kept when they reach a caller outside the PC's module
     * (the program's call into the library). The scanned words above them
     * prove nothing. */
    n = tm_call_chain_linked(pcs, n);
    const segment *pc_segment = segment_of(&segs, pc);
    int outside = 1;
    while (outside < n && segment_of(&segs, (uintptr_t)pcs[outside]) == pc_segment) outside++;
    if (outside == n) return 0;
    if (exact) *exact = n;
    return n;
  }
  if (exact) *exact = n;
  for (ssize_t off = from; off + 8 <= got && n < max; off += 8) {
    uintptr_t w;
    memcpy(&w, copy + off, sizeof w);
    const segment *s = segment_of(&segs, w);
    if (!s || w - s->start < 8) continue;
    if (tm_after_call((const unsigned char *)w)) pcs[n++] = (void *)w;
  }
  return n;
}
