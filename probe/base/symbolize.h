/* Names code and data addresses: "module!symbol+0xoff", "module+0xoff", or
 * "[heap]+0xoff" / "[stack]+0xoff" / "[anon]+0xoff".
 *
 * dladdr first; then the module's own ELF .symtab (static variables,
 * glibc-internal locks), or its /usr/lib/debug/.build-id/ file when the
 * module is stripped (a local data symbol whose name is not unique
 * also names its source file: "lock+0x0 (random.c)"). Symbol tables are cached per module. Sampler thread
 * only: nothing here is thread-safe. */
#ifndef THREADMON_SYMBOLIZE_H
#define THREADMON_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TM_BUILD_ID_MAX 64

/* Where code lies, for a reader's file:line (threadmon.CodeLocation). */
typedef struct tm_code_location {
  const char *path; /* the module's file (cached), NULL when unknown */
  uint64_t address; /* in the module's link-time addresses */
  const uint8_t *build_id;
  size_t build_id_len;
} tm_code_location;

typedef struct tm_symbol {
  char module[128]; /* file name without directories, or [heap] etc. */
  char symbol[256]; /* "name+0xoff", "" when none is known */
  uintptr_t module_offset;
  tm_code_location where; /* of the address itself; path NULL outside modules */
} tm_symbol;

/* Returns 0 when at least the module is known, -1 otherwise. */
int tm_symbolize(uintptr_t addr, tm_symbol *out);

/* One string: "module!symbol", or "module+0xoff", or "0xaddr". */
void tm_symbolize_format(uintptr_t addr, char *out, size_t n);

/* A stack frame: "module!function+0xoff" (offset of pc itself). With
 * return_address, the function is the one holding pc - 1 (the call), and
 * so is *where (may be NULL): the call instruction's line is the one a
 * reader shows. */
void tm_symbolize_frame(uintptr_t pc, bool return_address, char *out, size_t n,
                        tm_code_location *where);

/* Fills a CodeLocation message from where (strings stay owned by the
 * cache, which is never freed). */
struct Threadmon__CodeLocation;
void tm_code_location_message(const tm_code_location *where, struct Threadmon__CodeLocation *m);

#endif
