#include "framesizes.h"

#include <QFile>
#include <QLocale>
#include <QStringList>
#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "texttable.h"
#include "threadmon.pb-c.h"
#include "tmblock.h"
#include "tmwire.h"

namespace {

struct Tally {
  uint64_t frames = 0;
  uint64_t bytes = 0;
};

// Bytes a value of this type takes in its message struct; 0 for what the
// breakdown leaves whole (strings, bytes).
size_t scalarSize(ProtobufCType t) {
  switch (t) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_ENUM:
      return 4;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
      return 8;
    case PROTOBUF_C_TYPE_BOOL:
      return sizeof(protobuf_c_boolean);
    default:
      return 0;
  }
}

// A field's bytes are what the message loses without it: each field is
// emptied in turn (and put back). Message fields are broken down too, one
// level deeper each, down to depth 0.
void tallyFields(ProtobufCMessage *m, const QString &prefix, int depth,
                 std::map<QString, Tally> &out) {
  const ProtobufCMessageDescriptor *desc = m->descriptor;
  const size_t whole = protobuf_c_message_get_packed_size(m);
  auto *base = reinterpret_cast<char *>(m);
  for (unsigned i = 0; i < desc->n_fields; i++) {
    const ProtobufCFieldDescriptor &f = desc->fields[i];
    const QString name = prefix + '.' + QLatin1String(f.name);
    void *value = base + f.offset;
    size_t saved = 0;
    size_t width = 0;
    if (f.label == PROTOBUF_C_LABEL_REPEATED) {
      auto *count = reinterpret_cast<size_t *>(base + f.quantifier_offset);
      saved = *count;
      *count = 0;
      out[name].bytes += whole - protobuf_c_message_get_packed_size(m);
      *count = saved;
      if (f.type == PROTOBUF_C_TYPE_MESSAGE && depth > 0)
        for (size_t k = 0; k < saved; k++)
          tallyFields((*reinterpret_cast<ProtobufCMessage ***>(value))[k], name, depth - 1, out);
      continue;
    }
    if (f.type == PROTOBUF_C_TYPE_MESSAGE) {
      auto *sub = reinterpret_cast<ProtobufCMessage **>(value);
      ProtobufCMessage *keep = *sub;
      if (!keep) continue;
      *sub = nullptr;
      out[name].bytes += whole - protobuf_c_message_get_packed_size(m);
      *sub = keep;
      if (depth > 0) tallyFields(keep, name, depth - 1, out);
      continue;
    }
    if ((width = scalarSize(f.type)) == 0) continue;
    char keep[8];
    std::memcpy(keep, value, width);
    std::memset(value, 0, width);
    out[name].bytes += whole - protobuf_c_message_get_packed_size(m);
    std::memcpy(value, keep, width);
  }
}

QString number(uint64_t v);
QString share(uint64_t part, uint64_t whole);

// The fields under parent of at least 0.5% of all the frames' bytes,
// largest first, each followed by its own.
template <typename Rate>
void addFields(TextTable &table, const std::map<QString, Tally> &fields, const QString &kind,
               const QString &parent, uint64_t raw, const Rate &rate) {
  std::vector<std::pair<QString, uint64_t>> sub;
  const int depth = int(parent.count('.')) + 1;
  for (const auto &[name, t] : fields)
    if (name.startsWith(parent + '.') && name.count('.') == depth && t.bytes * 200 >= raw)
      sub.emplace_back(name, t.bytes);
  std::sort(sub.begin(), sub.end(),
            [](const auto &a, const auto &b) { return a.second > b.second; });
  for (const auto &[name, b] : sub) {
    table.addRow({QString(2 * depth, ' ') + name.mid(kind.size() + 1), "", number(b), share(b, raw),
                  rate(b)});
    addFields(table, fields, kind, name, raw, rate);
  }
}

QString number(uint64_t v) {
  return QLocale(QLocale::English).toString(qulonglong(v));
}

QString share(uint64_t part, uint64_t whole) {
  return whole ? QString::number(100.0 * double(part) / double(whole), 'f', 1) + '%' : "-";
}

}  // namespace

QString frameSizesText(const QString &path, QString *error) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    *error = QStringLiteral("cannot open: %1").arg(file.errorString());
    return {};
  }
  tm_decoder dec;
  tm_decoder_init(&dec);
  std::map<QString, Tally> kinds, fields;
  uint64_t raw = 0, firstTick = 0, lastTick = 0;
  bool done = false;
  while (!done && !error->size()) {
    QByteArray buf = file.read(1 << 20);
    if (buf.isEmpty()) break;
    tm_decoder_feed(&dec, buf.constData(), size_t(buf.size()));
    for (;;) {
      const uint8_t *payload = nullptr;
      uint32_t n = 0;
      tm_decode_status st = tm_decoder_next(&dec, &payload, &n);
      if (st == TM_DECODE_NEED_MORE) break;
      if (st == TM_DECODE_ERROR) {
        *error = QString::fromUtf8(tm_decoder_error(&dec));
        done = true;
        break;
      }
      Threadmon__Frame *f = threadmon__frame__unpack(nullptr, n, payload);
      if (!f) {
        *error = QStringLiteral("malformed protobuf frame at byte %1").arg(dec.offset);
        done = true;
        break;
      }
      const ProtobufCFieldDescriptor *body =
          protobuf_c_message_descriptor_get_field(&threadmon__frame__descriptor, f->body_case);
      const QString kind = body ? QLatin1String(body->name) : QStringLiteral("(none)");
      Tally &t = kinds[kind];
      t.frames++;
      t.bytes += TM_FRAME_PREFIX_BYTES + n;
      raw += TM_FRAME_PREFIX_BYTES + n;
      if (body) {
        auto *sub =
            *reinterpret_cast<ProtobufCMessage **>(reinterpret_cast<char *>(f) + body->offset);
        tallyFields(sub, kind, 1, fields);
      }
      if (f->body_case == THREADMON__FRAME__BODY_TICK) {
        if (!firstTick) firstTick = f->tick->time_ns;
        lastTick = f->tick->time_ns;
      }
      threadmon__frame__free_unpacked(f, nullptr);
    }
  }
  if (!error->size() && tm_decoder_pending(&dec) > 0)
    *error = QStringLiteral("truncated at byte %1").arg(tm_decoder_good_offset(&dec));
  const uint64_t disk = uint64_t(file.size());
  const double seconds = lastTick > firstTick ? double(lastTick - firstTick) / 1e9 : 0;
  QStringList out;
  out << QStringLiteral("%1: %2 bytes on disk; %3 bytes of frames; format %4.%5")
             .arg(path, number(disk), number(raw))
             .arg(dec.format_major)
             .arg(dec.format_minor);
  if (dec.blocks)
    out << QStringLiteral("%1 zstd blocks: %2 bytes hold %3 bytes of frames (%4x)")
               .arg(number(dec.blocks), number(dec.block_bytes), number(dec.block_raw))
               .arg(double(dec.block_raw) / double(std::max<uint64_t>(dec.block_bytes, 1)), 0, 'f',
                    2);
  if (dec.format_major >= TM_FORMAT_MAJOR_BLOCKS) {
    tm_index index;
    int fromTail = 0;
    char why[128];
    if (tm_capture_index(file.handle(), disk, &index, &fromTail, why, sizeof why) == 0)
      out << (fromTail
                  ? QStringLiteral("index: %1 records, read from its end")
                  : QStringLiteral("no index at its end (cut short?): %1 records found by a scan"))
                 .arg(number(index.n));
    tm_index_free(&index);
  }
  if (seconds > 0)
    out << QStringLiteral("%1 s of ticks: %2 MB/s on disk, %3 MB/s of frames")
               .arg(seconds, 0, 'f', 1)
               .arg(double(disk) / seconds / 1e6, 0, 'f', 3)
               .arg(double(raw) / seconds / 1e6, 0, 'f', 3);
  out << QString();
  // Kinds by size, each followed by its fields of at least 0.5% of the
  // frames' bytes, largest first.
  std::vector<std::pair<QString, Tally>> rows(kinds.begin(), kinds.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto &a, const auto &b) { return a.second.bytes > b.second.bytes; });
  TextTable table;
  table.addColumn("frame kind / field", TextTable::Left);
  table.addColumn("frames", TextTable::Right);
  table.addColumn("bytes", TextTable::Right);
  table.addColumn("share", TextTable::Right);
  table.addColumn("bytes/s", TextTable::Right);
  auto rate = [&](uint64_t b) { return seconds > 0 ? number(uint64_t(double(b) / seconds)) : "-"; };
  for (const auto &[kind, t] : rows) {
    table.addRow({kind, number(t.frames), number(t.bytes), share(t.bytes, raw), rate(t.bytes)});
    addFields(table, fields, kind, kind, raw, rate);
  }
  out << table.lines();
  tm_decoder_free(&dec);
  return out.join('\n') + '\n';
}
