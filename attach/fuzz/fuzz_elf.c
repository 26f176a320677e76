/* libFuzzer: a module's ELF file as the target may have put it on disk
 * (docs/fuzzing.md). The bytes go into a memfd that a maps line names, as
 * one of the target's files; then its load bias and build-id (maps.c), its
 * symbols (elfsyms.c, and the debug file its build-id names) and its
 * unwind tables' location (rcfi.c, which copies them from this process as
 * it would from the target) are read, and addresses across the mapping
 * looked up and formatted; a Go module's runtime layout is read from its
 * DWARF (goruntime.c, golayout.c; not walked: this process is no Go). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfsyms.h"
#include "goruntime.h"
#include "maps.h"
#include "rcfi.h"

#define MAP_START 0x400000u
#define MAP_LEN 0x100000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int file_fd(void) {
  static int fd = -1;
  if (fd < 0) fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
  return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = file_fd();
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) return 0;
  char line[128];
  int len = snprintf(line, sizeof line, "%x-%x r-xp 00000000 00:00 0 /proc/self/fd/%d\n",
                     MAP_START, MAP_START + MAP_LEN, fd);
  FILE *f = fmemopen(line, (size_t)len, "r");
  if (!f) return 0;
  tm_maps m;
  tm_notes notes = {0};
  tm_maps_read(f, getpid(), &m, &notes);
  fclose(f);
  tm_symtabs *syms = tm_symtabs_new(&m);
  tm_rcfi *cfi = tm_rcfi_new(&m);
  if (syms && cfi) {
    /* 64 addresses: more would make the lookups, not the parsing, the run. */
    for (uintptr_t a = MAP_START; a < MAP_START + MAP_LEN; a += 0x3ffd) {
      char out[160];
      tm_symtabs_format(syms, a, (a & 1) != 0, out, sizeof out);
      if (!memchr(out, 0, sizeof out)) __builtin_trap();
    }
    tm_cfi_tables t;
    if (tm_rcfi_find(cfi, MAP_START + 0x1000, &t) && !(t.lo <= t.hdr && t.hdr < t.hi))
      __builtin_trap();
    tm_go_reader go;
    tm_go_reader_open(&m, syms, &go);
    if (go.ready && (go.layout.m_procid >= 65536 || go.layout.m_alllink >= 65536 ||
                     !memchr(go.why, 0, sizeof go.why)))
      __builtin_trap();
  }
  tm_rcfi_free(cfi);
  tm_symtabs_free(syms);
  tm_maps_free(&m);
  return 0;
}
