/* libFuzzer: a /proc/PID/maps text, as the target's mappings make it
 * (docs/fuzzing.md). Modules are opened through /proc/0/root, which does
 * not exist: this target is the parser and lookups, fuzz-elf the files. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  FILE *f = fmemopen((void *)data, size, "r");
  if (!f) return 0;
  tm_maps m;
  tm_notes notes = {0};
  tm_maps_read(f, 0, &m, &notes);
  fclose(f);
  for (size_t i = 0; i < m.nmaps; i++) {
    const tm_mapping *mp = &m.maps[i];
    uintptr_t probes[] = {mp->start, mp->end - 1, mp->end, mp->start - 1};
    for (size_t k = 0; k < sizeof probes / sizeof *probes; k++) {
      const tm_mapping *found = tm_maps_find(&m, probes[k]);
      if (found && (probes[k] < found->start || probes[k] >= found->end)) __builtin_trap();
      const tm_module *mod = tm_maps_module_of(&m, probes[k]);
      if (mod && !tm_module_name(mod)) __builtin_trap();
    }
  }
  tm_maps_free(&m);
  return 0;
}
