/* Minimal assertions for the probe tests: one line naming the failed check,
 * then a non-zero exit. Works with NDEBUG. */
#ifndef TM_CHECK_H
#define TM_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

/* CHECK with a printf-style account of what was seen instead. */
#define CHECKF(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define CHECK_EQ(a, b)                                                                      \
  do {                                                                                      \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                         \
    if (check_a_ != check_b_) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, \
              #a, #b, check_a_, check_b_);                                                  \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

#endif
