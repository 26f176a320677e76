/* CHECK for the wire format's unit tests: reports and counts a failure,
 * goes on. */
#ifndef TM_TEST_CHECK_H
#define TM_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

#endif
