#include "streammutator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>

#include "tmblock.h"
#include "tmwire.h"

namespace tmfuzz {

namespace {

using Rng = std::minstd_rand;

size_t pick(Rng &rng, size_t n) { return n ? size_t(rng()) % n : 0; }

uint32_t le32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// --- A protobuf payload as a tree, parsed without the schema ---------------
// A length-delimited field is taken as a message when it parses as one,
// else as packed varints, else as bytes; re-encoding fixes every length, so
// a varint can grow from one byte to ten.

struct Node {
  enum Kind { Varint, Fixed64, Fixed32, Bytes, Message, Packed } kind = Varint;
  uint64_t key = 0;  // field number << 3 | wire type
  uint64_t value = 0;
  std::string bytes;
  std::vector<Node> fields;
  std::vector<uint64_t> packed;
};

bool readVarint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    const uint8_t b = *(*p)++;
    *v |= uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

void putVarint(uint64_t v, std::string *out) {
  while (v >= 0x80) {
    out->push_back(char(v | 0x80));
    v >>= 7;
  }
  out->push_back(char(v));
}

bool parseMessage(const uint8_t *p, const uint8_t *end, int depth, std::vector<Node> *out);

Node lengthDelimited(uint64_t key, const uint8_t *p, const uint8_t *end, int depth) {
  Node n;
  n.key = key;
  if (depth < 8 && p < end && parseMessage(p, end, depth + 1, &n.fields)) {
    n.kind = Node::Message;
    return n;
  }
  n.fields.clear();
  const uint8_t *q = p;
  uint64_t v;
  while (q < end && readVarint(&q, end, &v)) n.packed.push_back(v);
  if (q == end && !n.packed.empty()) {
    n.kind = Node::Packed;
    return n;
  }
  n.packed.clear();
  n.kind = Node::Bytes;
  n.bytes.assign(reinterpret_cast<const char *>(p), size_t(end - p));
  return n;
}

bool parseMessage(const uint8_t *p, const uint8_t *end, int depth, std::vector<Node> *out) {
  while (p < end) {
    uint64_t key, v;
    if (!readVarint(&p, end, &key) || key >> 3 == 0) return false;
    switch (key & 7) {
      case 0: {
        if (!readVarint(&p, end, &v)) return false;
        Node n;
        n.key = key;
        n.value = v;
        out->push_back(n);
        break;
      }
      case 1:
      case 5: {
        const size_t w = (key & 7) == 1 ? 8 : 4;
        if (size_t(end - p) < w) return false;
        Node n;
        n.kind = w == 8 ? Node::Fixed64 : Node::Fixed32;
        n.key = key;
        std::memcpy(&n.value, p, w);
        p += w;
        out->push_back(n);
        break;
      }
      case 2:
        if (!readVarint(&p, end, &v) || v > uint64_t(end - p)) return false;
        out->push_back(lengthDelimited(key, p, p + v, depth));
        p += v;
        break;
      default: return false;
    }
  }
  return true;
}

void encode(const std::vector<Node> &fields, std::string *out) {
  for (const Node &n : fields) {
    putVarint(n.key, out);
    std::string inner;
    switch (n.kind) {
      case Node::Varint: putVarint(n.value, out); continue;
      case Node::Fixed64: out->append(reinterpret_cast<const char *>(&n.value), 8); continue;
      case Node::Fixed32: out->append(reinterpret_cast<const char *>(&n.value), 4); continue;
      case Node::Bytes: inner = n.bytes; break;
      case Node::Message: encode(n.fields, &inner); break;
      case Node::Packed:
        for (uint64_t v : n.packed) putVarint(v, &inner);
        break;
    }
    putVarint(inner.size(), out);
    out->append(inner);
  }
}

// Every varint value in the tree, and every message's field list.
void collect(std::vector<Node> *fields, std::vector<uint64_t *> *varints,
             std::vector<std::vector<Node> *> *lists) {
  lists->push_back(fields);
  for (Node &n : *fields) {
    if (n.kind == Node::Varint) varints->push_back(&n.value);
    if (n.kind == Node::Packed)
      for (uint64_t &v : n.packed) varints->push_back(&v);
    if (n.kind == Node::Message) collect(&n.fields, varints, lists);
  }
}

// Values that have broken readers before, or sit on an edge: time and
// counter limits, int32/int64 sign bits, zigzag extremes.
uint64_t interesting(Rng &rng) {
  static const uint64_t values[] = {0,
                                    1,
                                    2,
                                    0x7F,
                                    0x80,
                                    0xFFF,
                                    0x1000,
                                    0x7FFFFFFF,
                                    0x80000000,
                                    0xFFFFFFFF,
                                    uint64_t(1) << 32,
                                    uint64_t(1) << 40,
                                    uint64_t(1) << 48,
                                    (uint64_t(1) << 58) - 1,
                                    uint64_t(1) << 58,
                                    uint64_t(1) << 62,
                                    (uint64_t(1) << 63) - 1,
                                    uint64_t(1) << 63,
                                    ~uint64_t(0) - 1,
                                    ~uint64_t(0)};
  const size_t n = sizeof values / sizeof values[0];
  const size_t i = pick(rng, n + 2);
  if (i < n) return values[i];
  return i == n ? uint64_t(rng()) << 32 ^ rng() : uint64_t(rng()) % 100000;
}

// One structural change to a payload; false when it does not parse.
bool mutateTree(std::string *payload, Rng &rng) {
  std::vector<Node> root;
  const auto *p = reinterpret_cast<const uint8_t *>(payload->data());
  if (!parseMessage(p, p + payload->size(), 0, &root)) return false;
  std::vector<uint64_t *> varints;
  std::vector<std::vector<Node> *> lists;
  collect(&root, &varints, &lists);
  switch (pick(rng, 4)) {
    case 0:
    case 1:  // a number
      if (varints.empty()) return false;
      *varints[pick(rng, varints.size())] = interesting(rng);
      break;
    case 2: {  // a field twice (a repeated sample, a second value)
      std::vector<Node> *l = lists[pick(rng, lists.size())];
      if (l->empty()) return false;
      const size_t i = pick(rng, l->size());
      l->insert(l->begin() + std::ptrdiff_t(pick(rng, l->size() + 1)), Node((*l)[i]));
      break;
    }
    default: {  // a field gone
      std::vector<Node> *l = lists[pick(rng, lists.size())];
      if (l->empty()) return false;
      l->erase(l->begin() + std::ptrdiff_t(pick(rng, l->size())));
      break;
    }
  }
  payload->clear();
  encode(root, payload);
  return true;
}

// The whole frames of raw (prefix + payload each) into out.
void addFrames(const uint8_t *raw, size_t len, std::vector<std::string> *out) {
  size_t at = 0;
  while (len - at >= TM_FRAME_PREFIX_BYTES) {
    const uint32_t n = le32(raw + at);
    if (n > len - at - TM_FRAME_PREFIX_BYTES) break;
    out->emplace_back(reinterpret_cast<const char *>(raw + at + TM_FRAME_PREFIX_BYTES), n);
    at += TM_FRAME_PREFIX_BYTES + n;
  }
}

// A whole block record's frames, or false when it is none (or damaged).
bool blockFrames(const uint8_t *body, uint32_t n, std::vector<std::string> *out) {
  tm_block_header h;
  if (tm_block_header_parse(body, n, &h) != 0) return false;
  std::vector<uint8_t> raw(h.raw_len + 1);
  if (tm_block_decompress(body, n, &h, raw.data()) != 0) return false;
  addFrames(raw.data(), h.raw_len, out);
  return true;
}

// Forges one value, checksums made good: an index entry's offset or time,
// or a block header's time or raw length. Edge values: 0, 1, a day and 78
// hours on, centuries on, the previous entry's.
void forge(std::string *records, tm_index *index, uint32_t how) {
  if (!index->n) return;
  tm_index_entry &e = index->e[(how >> 8) % index->n];
  const uint64_t base = e.first_ns ? e.first_ns : 1;
  const uint64_t values[] = {0,
                             1,
                             base + (24ull * 3600 + 1) * 1000000000,
                             base + (1ull << 48) - 1,
                             1ull << 62,
                             index->e[0].offset,
                             index->e[0].first_ns};
  const uint64_t v = values[(how >> 4) % (sizeof values / sizeof values[0])];
  switch (how & 7) {
    case 0:
      e.offset = v;
      break;
    case 1:
      e.first_ns = v;
      break;
    case 2:
      e.last_ns = v;
      break;
    case 3:
      std::swap(e, index->e[(how >> 12) % index->n]);
      break;
    default: {  // the block header's own: its times or its raw length
      const uint64_t at = e.offset - TM_HEADER_BYTES;
      if (e.offset < TM_HEADER_BYTES ||
          at + TM_FRAME_PREFIX_BYTES + TM_BLOCK_HEADER_BYTES > records->size())
        return;
      auto *r = reinterpret_cast<uint8_t *>(&(*records)[at]);
      const uint32_t word = tm_get_u32le(r);
      const uint32_t n = word & ~TM_BLOCK_FLAG;
      if (!(word & TM_BLOCK_FLAG) || at + TM_FRAME_PREFIX_BYTES + n > records->size()) return;
      uint8_t *b = r + TM_FRAME_PREFIX_BYTES;
      const int field = (how & 7) == 7 ? 4 : (how & 7) == 6 ? 24 : 16;  // raw_len, last, first
      for (int k = 0; k < (field == 4 ? 4 : 8); k++) b[field + k] = uint8_t(v >> (8 * k));
      tm_put_u32le(r + 4, tm_crc32c(b, n));
    }
  }
}

void putFrame(const std::string &f, uint8_t *p) {
  tm_frame_prefix_encode(p, reinterpret_cast<const uint8_t *>(f.data()), uint32_t(f.size()));
  std::memcpy(p + TM_FRAME_PREFIX_BYTES, f.data(), f.size());
}

}  // namespace

bool split(const uint8_t *data, size_t size, Stream *out) {
  if (size < TM_HEADER_BYTES) return false;
  out->header.assign(reinterpret_cast<const char *>(data), TM_HEADER_BYTES);
  out->frames.clear();
  out->blocks = data[8] == TM_FORMAT_MAJOR_BLOCKS && data[9] == 0;
  size_t at = TM_HEADER_BYTES;
  while (size - at >= TM_FRAME_PREFIX_BYTES) {
    uint32_t len = le32(data + at);
    const bool block = out->blocks && (len & TM_BLOCK_FLAG);
    len &= block ? ~TM_BLOCK_FLAG : ~0u;
    if (len > size - at - TM_FRAME_PREFIX_BYTES) break;
    const uint8_t *payload = data + at + TM_FRAME_PREFIX_BYTES;
    if (block) {
      if (len && payload[0] == TM_BLOCK_INDEX) {  // the index: made again by join
        out->indexed = true;
        at += TM_FRAME_PREFIX_BYTES + len;
        break;
      }
      if (!blockFrames(payload, len, &out->frames)) break;
    } else {
      out->frames.emplace_back(reinterpret_cast<const char *>(payload), len);
    }
    at += TM_FRAME_PREFIX_BYTES + len;
  }
  out->tail.assign(reinterpret_cast<const char *>(data + at), size - at);
  return true;
}

size_t join(const Stream &s, uint8_t *out, size_t maxSize) {
  std::vector<uint8_t> body;  // the frames, prefixed
  size_t need = 0;
  for (const std::string &f : s.frames) need += TM_FRAME_PREFIX_BYTES + f.size();
  body.resize(need);
  size_t at = 0;
  std::vector<size_t> starts;
  for (const std::string &f : s.frames) {
    starts.push_back(at);
    putFrame(f, body.data() + at);
    at += TM_FRAME_PREFIX_BYTES + f.size();
  }
  starts.push_back(at);
  std::string records;
  if (!s.blocks) {
    records.assign(reinterpret_cast<const char *>(body.data()), body.size());
  } else {
    tm_block_writer w;
    tm_block_writer_init(&w, 1);
    const size_t step = std::max<size_t>(s.block_frames, 1);
    const size_t blocks = (s.frames.size() + step - 1) / step;
    tm_index index{};
    for (size_t i = 0; i < s.frames.size(); i += step) {
      const size_t from = starts[i], to = starts[std::min(i + step, s.frames.size())];
      // Timed by its ticks, as a writer times a block (none: unknown).
      uint64_t first = 0, last = 0;
      for (size_t k = i; k < std::min(i + step, s.frames.size()); k++) {
        const auto *f = reinterpret_cast<const uint8_t *>(s.frames[k].data());
        if (const uint64_t t = tm_frame_tick_time(f, s.frames[k].size())) {
          first = first ? first : t;
          last = t;
        }
      }
      tm_index_entry meta;
      const size_t n = tm_block_encode(&w, body.data() + from, to - from, first, last, &meta);
      meta.offset = s.header.size() + records.size();
      if (!n) {
        meta.first_ns = first;
        meta.last_ns = last;
        meta.kinds = tm_frames_describe(body.data() + from, to - from, &meta.frames);
      }
      tm_index_add(&index, &meta);
      if (n && s.block_damage && (s.block_damage & 0xFF) % blocks == i / step) {
        uint8_t *b = w.out + TM_FRAME_PREFIX_BYTES;
        const size_t len = n - TM_FRAME_PREFIX_BYTES;
        b[(s.block_damage >> 8) % len] ^= uint8_t(1u << ((s.block_damage >> 4) & 7));
        const uint32_t crc = tm_crc32c(b, len);
        for (int k = 0; k < 4; k++) w.out[4 + k] = uint8_t(crc >> (8 * k));
      }
      if (n)
        records.append(reinterpret_cast<const char *>(w.out), n);
      else
        records.append(reinterpret_cast<const char *>(body.data() + from), to - from);
    }
    tm_block_writer_free(&w);
    if (s.forge) forge(&records, &index, s.forge);
    if (s.indexed) {
      uint8_t *rec = nullptr;
      const size_t n = tm_index_encode(&index, s.header.size() + records.size(), &rec);
      records.append(reinterpret_cast<const char *>(rec), n);
      free(rec);
    }
    tm_index_free(&index);
  }
  need = s.header.size() + records.size() + s.tail.size();
  if (need > maxSize) return 0;
  uint8_t *p = out;
  std::memcpy(p, s.header.data(), s.header.size());
  p += s.header.size();
  std::memcpy(p, records.data(), records.size());
  p += records.size();
  std::memcpy(p, s.tail.data(), s.tail.size());
  return need;
}

size_t mutate(uint8_t *data, size_t size, size_t maxSize, unsigned seed, ByteMutator bytes) {
  Rng rng(seed);
  Stream s;
  // One time in sixteen, or when there is no stream to keep whole: bytes.
  if (pick(rng, 16) == 0 || !split(data, size, &s) || s.frames.empty())
    return bytes(data, size, maxSize);
  const size_t i = pick(rng, s.frames.size());
  std::string &f = s.frames[i];
  switch (pick(rng, 8)) {
    case 0:
    case 1: {  // the payload's bytes
      if (f.empty()) f.push_back(char(rng()));
      const size_t len = f.size(), cap = std::max<size_t>(len * 2, 64);
      f.resize(cap);
      f.resize(std::min(cap, bytes(reinterpret_cast<uint8_t *>(&f[0]), len, cap)));
      break;
    }
    case 2:
    case 3:
    case 4:  // the payload's structure
      if (!mutateTree(&f, rng)) return bytes(data, size, maxSize);
      break;
    case 5: {  // a frame sent again, here or later
      const std::string copy = f;
      const size_t times = 1 + pick(rng, 3);
      for (size_t k = 0; k < times; k++)
        s.frames.insert(s.frames.begin() + std::ptrdiff_t(pick(rng, s.frames.size() + 1)), copy);
      break;
    }
    case 6:  // a frame lost
      s.frames.erase(s.frames.begin() + std::ptrdiff_t(i));
      break;
    default:  // two frames out of order; in blocks, frames to a block changed, or a block damaged
      std::swap(f, s.frames[pick(rng, s.frames.size())]);
      s.block_frames = 1 + pick(rng, 32);
      if (s.blocks && pick(rng, 2)) s.block_damage = uint32_t(rng()) | 1;
      // A forged index or block header, or (1 in 4) the index made anew.
      if (s.blocks && pick(rng, 2)) s.forge = uint32_t(rng()) | 0x10000;
      if (s.blocks && pick(rng, 4) == 0) s.indexed = !s.indexed;
      break;
  }
  const size_t n = join(s, data, maxSize);
  return n ? n : bytes(data, size, maxSize);
}

}  // namespace tmfuzz
