/* Names of a target's code and data addresses from its modules' ELF symbol
 * tables (libelf): .symtab, or the /usr/lib/debug/.build-id file when the
 * module is stripped, and .dynsym. Functions and objects, local ones too
 * (glibc's internal locks and __lll_lock_wait are local). Loaded once per
 * module, on first use. */
#ifndef THREADMON_ATTACH_ELFSYMS_H
#define THREADMON_ATTACH_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "maps.h"

typedef struct tm_symtabs tm_symtabs;

/* Symbol tables for m's modules (m must outlive it). */
tm_symtabs *tm_symtabs_new(const tm_maps *m);
void tm_symtabs_free(tm_symtabs *s);

/* The symbol holding addr, with *off its offset; NULL when none. With
 * return_address, the symbol holding addr - 1 (the call before it). */
const char *tm_symtabs_lookup(tm_symtabs *s, uintptr_t addr, bool return_address,
                              uintptr_t *off);

/* The runtime address of the symbol called name in module (an index in
 * the maps' modules); false when it has none by that name. */
bool tm_symtabs_address(tm_symtabs *s, size_t module, const char *name, uintptr_t *addr);

/* "module!symbol+0xoff", "module+0xoff", "[heap]+0xoff" or "0xaddr",
 * printable (tm_printable). */
void tm_symtabs_format(tm_symtabs *s, uintptr_t addr, bool return_address, char *out, size_t n);

#endif
