/* libFuzzer: the frames' symbol names a wait is classified by, one per
 * line (docs/fuzzing.md): names come from the target's ELF files. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "waitkind.h"

#define FRAMES 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  const char *names[FRAMES];
  int n = 0;
  for (char *p = text; n < FRAMES && p <= text + size;) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = 0;
    names[n++] = *p ? p : NULL; /* an empty line: a frame without a name */
    if (!nl) break;
    p = nl + 1;
  }
  tm_wait_class c = tm_wait_classify_names(names, n);
  if (c.frame >= n || (c.frame < 0) != (c.kind == TM_WAIT_UNKNOWN)) __builtin_trap();
  if (!c.what || !tm_wait_kind_name(c.kind)) __builtin_trap();
  free(text);
  return 0;
}
