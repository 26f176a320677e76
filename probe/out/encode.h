/* Packs one threadmon.Frame behind its tmwire prefix into a buffer the
 * sampler owns, ready to be written whole. */
#ifndef THREADMON_ENCODE_H
#define THREADMON_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "threadmon.pb-c.h"

typedef struct tm_encoder {
  uint8_t *buf;
  size_t cap;
} tm_encoder;

/* Returns the length of prefix + payload at e->buf, or 0 when memory or
 * the format's frame limit ran out (the frame is then lost). */
size_t tm_encode_frame(tm_encoder *e, const Threadmon__Frame *f);

#endif
