/* What a look at another process skipped, and why: one line each.
 *
 * Everything attach reads is the target's to choose (its maps, its ELF
 * files, its stack and futex words). What does not make sense is skipped,
 * never trusted, and said here once, so that a user sees why a module has
 * no names or a wait was not decoded. */
#ifndef THREADMON_ATTACH_NOTES_H
#define THREADMON_ATTACH_NOTES_H

#define TM_NOTES_MAX 8
#define TM_NOTE_LEN 256

typedef struct tm_notes {
  char line[TM_NOTES_MAX][TM_NOTE_LEN];
  int n;
  unsigned more; /* notes past TM_NOTES_MAX, counted only */
} tm_notes;

/* Control characters in text become '?': names are the target's to
 * choose, and an escape sequence printed to a root terminal is a command
 * to it. */
void tm_printable(char *text);

/* Adds a printf-formatted line, printable; notes NULL: nothing. */
void tm_note(tm_notes *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
