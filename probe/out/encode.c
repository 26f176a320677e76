#include "encode.h"

#include <stdlib.h>

#include "probe.h"
#include "tmwire.h"

size_t tm_encode_frame(tm_encoder *e, const Threadmon__Frame *f) {
  size_t payload = protobuf_c_message_get_packed_size(&f->base);
  if (payload > TM_MAX_FRAME_BYTES) return 0;
  size_t need = TM_FRAME_PREFIX_BYTES + payload;
  if (need > e->cap) {
    size_t cap = e->cap ? e->cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *b = realloc(e->buf, cap);
    if (!b) return 0;
    e->buf = b;
    e->cap = cap;
  }
  uint8_t *body = e->buf + TM_FRAME_PREFIX_BYTES;
  protobuf_c_message_pack(&f->base, body);
  tm_frame_prefix_encode(e->buf, body, (uint32_t)payload);
  return need;
}

/* The probe's states and kinds go on the wire as they are: each of
 * proto/states.def must be the proto's number under the same name (and
 * proto/check_states.py fails the build when the proto has one it lacks). */
#define TM_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " is not " #b)
#define TM_WIRE_STATE(name, number) TM_SAME(TM_STATE_##name, THREADMON__THREAD_STATE__STATE_##name);
#define TM_SYNC_KIND(name, number, text, held) \
  TM_SAME(TM_KIND_##name, THREADMON__SYNC_KIND__KIND_##name);
#include "states.def"
#define TM_WIRE_STATE(name, number) \
  _Static_assert((number) < TM_FOLD_STATES, "wire states are numbered 0..n-1: " #name);
#include "states.def"
