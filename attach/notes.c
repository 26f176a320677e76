/* Skipped-input notes (notes.h). */
#include "notes.h"

#include <stdarg.h>
#include <stdio.h>

void tm_note(tm_notes *notes, const char *fmt, ...) {
  if (!notes) return;
  if (notes->n == TM_NOTES_MAX) {
    notes->more++;
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(notes->line[notes->n], TM_NOTE_LEN, fmt, ap);
  va_end(ap);
  tm_printable(notes->line[notes->n++]);
}

void tm_printable(char *text) {
  for (unsigned char *c = (unsigned char *)text; *c; c++)
    if (*c < 0x20 || *c == 0x7f) *c = '?';
}
