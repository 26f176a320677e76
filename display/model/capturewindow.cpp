#include "capturewindow.h"

#include <QFile>
#include <algorithm>
#include <limits>

#include "framecheck.h"
#include "framedecoder.h"
#include "sessionmodel.h"
#include "tmwire.h"
#include "wirestate.h"

namespace tmon {

namespace {

// The body's field number from the payload's first tag (a Frame holds only
// its oneof), 0 when it is not a length-delimited field.
uint32_t bodyField(const uint8_t *p, uint32_t n) {
  uint32_t tag = 0;
  for (uint32_t i = 0, shift = 0; i < n && i < 5; i++, shift += 7) {
    tag |= uint32_t(p[i] & 0x7F) << shift;
    if (!(p[i] & 0x80)) return (tag & 7) == 2 ? tag >> 3 : 0;
  }
  return 0;
}

constexpr uint32_t kSummaryKind = 1u << THREADMON__FRAME__BODY_SUMMARY;

uint32_t u32le(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

bool CaptureWindow::open(const QString &path) {
  file_.setFileName(path);
  if (!file_.open(QIODevice::ReadOnly)) {
    error_ = QStringLiteral("cannot open: %1").arg(file_.errorString());
    return false;
  }
  header_ = file_.read(TM_HEADER_BYTES);
  if (header_.size() != TM_HEADER_BYTES) {
    error_ = QStringLiteral("not a threadmon capture (too short)");
    return false;
  }
  plain_ = uint8_t(header_[8]) == TM_FORMAT_MAJOR && header_[9] == 0;
  tm_index x{};
  int tail = 0;
  char err[320] = "";
  const int rc = tm_capture_index(int(file_.handle()), uint64_t(file_.size()), &x, &tail, err,
                                  sizeof err);
  if (rc == 0) index_.assign(x.e, x.e + x.n);
  tm_index_free(&x);
  if (rc != 0) {
    error_ = QString::fromUtf8(err);
    return false;
  }
  note_ = QString::fromUtf8(err);  // an index refused: read by a scan
  fromTail_ = tail != 0;
  if (index_.empty()) {
    error_ = QStringLiteral("no records to seek to");
    return false;
  }
  // Where the last record ends: at the index record (whose offset the tail
  // gives), or, found by a scan, after its block or its run of plain frames
  // (as many as the scan counted, each within the file).
  const qint64 at = fromTail_ ? file_.size() - TM_INDEX_TAIL_BYTES : qint64(index_.back().offset);
  const qint64 mapped = fromTail_ ? TM_INDEX_TAIL_BYTES : file_.size() - at;
  uchar *last = mapped >= TM_FRAME_PREFIX_BYTES ? file_.map(at, mapped) : nullptr;
  if (!last) {
    error_ = QStringLiteral("cannot read: %1").arg(file_.errorString());
    return false;
  }
  if (fromTail_) {
    dataEnd_ = uint64_t(u32le(last + 4)) << 32 | u32le(last);
  } else {
    uint64_t end = 0;
    const bool block = u32le(last) & TM_BLOCK_FLAG;
    for (uint32_t f = 0; f < (block ? 1 : index_.back().frames); f++) {
      if (uint64_t(mapped) - end < TM_FRAME_PREFIX_BYTES) break;
      const uint64_t next = end + TM_FRAME_PREFIX_BYTES + (u32le(last + end) & ~TM_BLOCK_FLAG);
      if (next > uint64_t(mapped)) break;
      end = next;
    }
    dataEnd_ = index_.back().offset + std::max<uint64_t>(end, TM_FRAME_PREFIX_BYTES);
  }
  file_.unmap(last);
  // Every record ends inside the file (a forged tail's offset or length
  // made a reader allocate gigabytes).
  if (dataEnd_ > uint64_t(file_.size()) || dataEnd_ < index_.back().offset) {
    error_ = QStringLiteral("its records end at byte %1, outside its %2 bytes")
                 .arg(dataEnd_)
                 .arg(file_.size());
    return false;
  }
  lo_.resize(index_.size());
  hi_.resize(index_.size());
  int64_t known = 0;
  for (size_t i = 0; i < index_.size(); i++) {
    const tm_index_entry &e = index_[i];
    lo_[i] = e.first_ns ? int64_t(e.first_ns) : known;
    // Block headers found by a scan are not checked as an index is: a
    // record that begins before the one before it is read from there.
    if (i && lo_[i] < lo_[i - 1]) {
      if (note_.isEmpty())
        note_ = QStringLiteral("record %1 begins before the one before it: read from there").arg(i);
      lo_[i] = lo_[i - 1];
    }
    // hi_ only grows (searched by firstRecordEndingAfter): a record that
    // ends before the one before it (an index checks first times only)
    // ends with it.
    hi_[i] = std::max(e.last_ns ? int64_t(e.last_ns) : lo_[i], i ? hi_[i - 1] : 0);
    known = std::max(known, hi_[i]);
  }
  return readDescriptions();
}

int64_t CaptureWindow::firstNs() const {
  for (int64_t t : lo_)
    if (t) return t;
  return 0;
}

int64_t CaptureWindow::lastNs() const { return hi_.empty() ? 0 : hi_.back(); }

size_t CaptureWindow::descriptionBytes() const {
  size_t b = 0;
  for (const Description &d : descriptions_) b += size_t(d.payload.size()) + sizeof d;
  return b;
}

// Decodes every record that says it holds a description (the index's kinds;
// a record whose kinds are unknown is read too) and keeps those frames.
// They are kept and replayed into every window: a program's are a few MB
// (57,000 objects about 6), a forged capture's could be the whole file.
constexpr size_t kMaxDescriptionBytes = size_t(64) << 20;

bool CaptureWindow::readDescriptions() {
  size_t record = 0, kept = 0;
  FrameDecoder dec(nullptr);
  dec.setFrameHook([&](const uint8_t *p, uint32_t n) {
    const uint32_t field = bodyField(p, n);  // any number in a crafted frame
    if (field < 32 && (kDescriptionKinds >> field & 1) && kept <= kMaxDescriptionBytes) {
      kept += n;
      descriptions_.push_back(
          Description{record, QByteArray(reinterpret_cast<const char *>(p), qsizetype(n))});
    }
  });
  dec.feed(header_.constData(), size_t(header_.size()));
  for (record = 0; record < index_.size() && !dec.failed(); record++) {
    if (kept > kMaxDescriptionBytes) {
      descriptions_.clear();
      error_ = QStringLiteral(
          "its descriptions of threads, objects and stacks pass 64 MiB (no program "
          "describes that much): damaged or forged, not read by windows");
      return false;
    }
    const tm_index_entry &e = index_[record];
    if (e.kinds && !(e.kinds & kDescriptionKinds)) continue;
    feedRecord(record, &dec);
  }
  if (dec.failed() && descriptions_.empty()) {
    error_ = dec.error();
    return false;
  }
  for (size_t i = 0; i < descriptions_.size(); i++) {
    const auto *p = reinterpret_cast<const uint8_t *>(descriptions_[i].payload.constData());
    const auto n = size_t(descriptions_[i].payload.size());
    if (bodyField(p, uint32_t(n)) != THREADMON__FRAME__BODY_SYNC_OBJECT) continue;
    Threadmon__Frame *f = threadmon__frame__unpack(nullptr, n, p);
    if (f && f->sync_object && f->sync_object->n_first_contention_stack)
      stackUpdates_.emplace_back(i, f->sync_object->id);
    threadmon__frame__free_unpacked(f, nullptr);
  }
  return true;
}

void CaptureWindow::applyLaterStacks(size_t to, SessionModel *model) const {
  for (const auto &[i, id] : stackUpdates_) {
    const Description &d = descriptions_[i];
    if (d.record >= to && model->indexOfSyncObject(id) >= 0)
      model->applyPayload(reinterpret_cast<const uint8_t *>(d.payload.constData()),
                          size_t(d.payload.size()));
  }
}

void CaptureWindow::feedRecord(size_t record, FrameDecoder *dec) const {
  const tm_index_entry &e = index_[record];
  const uint64_t end = record + 1 < index_.size() ? index_[record + 1].offset : dataEnd_;
  if (end <= e.offset || !file_.seek(qint64(e.offset))) return;
  // Records are read one by one here: the decoder sees them as a stream
  // with gaps, which it need not know about (each record stands alone).
  const QByteArray bytes = file_.read(qint64(end - e.offset));
  dec->feed(bytes.constData(), size_t(bytes.size()));
}

std::vector<std::pair<uint32_t, uint64_t>> CaptureWindow::hiddenLocks() const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const Description &d : descriptions_) {
    const auto *p = reinterpret_cast<const uint8_t *>(d.payload.constData());
    const auto n = size_t(d.payload.size());
    if (bodyField(p, uint32_t(n)) != THREADMON__FRAME__BODY_SYNC_OBJECT) continue;
    Threadmon__Frame *f = threadmon__frame__unpack(nullptr, n, p);
    // The kind read as stored: a forged one is no enum value (UBSan).
    if (f && f->sync_object &&
        wireEnum(&f->sync_object->kind) == THREADMON__SYNC_KIND__KIND_INTERNAL &&
        f->sync_object->address)
      out.emplace_back(f->sync_object->id, f->sync_object->address);
    threadmon__frame__free_unpacked(f, nullptr);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool CaptureWindow::hasSummaries() const {
  for (const tm_index_entry &e : index_)
    if (e.kinds == kSummaryKind) return true;
  return false;
}

void CaptureWindow::readSummaries(
    const std::function<void(const uint8_t *, uint32_t)> &hook) const {
  FrameDecoder dec(nullptr);
  dec.setFrameHook([&](const uint8_t *p, uint32_t n) {
    if (bodyField(p, n) == THREADMON__FRAME__BODY_SUMMARY) hook(p, n);
  });
  dec.feed(header_.constData(), size_t(header_.size()));
  for (size_t record = 0; record < index_.size() && !dec.failed(); record++)
    if (index_[record].kinds == kSummaryKind) feedRecord(record, &dec);
}

size_t CaptureWindow::firstRecordEndingAfter(int64_t t) const {
  // hi_ only grows (known times carried over), so it can be searched.
  return size_t(std::lower_bound(hi_.begin(), hi_.end(), t) - hi_.begin());
}

// Where a window starting at t0 is read from: forged times reach INT64_MIN.
int64_t CaptureWindow::warmUpFrom(int64_t t0) {
  return t0 < std::numeric_limits<int64_t>::min() + kWarmUpNs ? std::numeric_limits<int64_t>::min()
                                                              : t0 - kWarmUpNs;
}

size_t CaptureWindow::firstRecordStartingAfter(int64_t t) const {
  return size_t(std::upper_bound(lo_.begin(), lo_.end(), t) - lo_.begin());
}

std::pair<size_t, size_t> CaptureWindow::recordsOf(int64_t t0, int64_t t1) const {
  const size_t from = firstRecordEndingAfter(warmUpFrom(t0));
  // One record past the window: the ticks that close its last spans.
  return {from, std::min(index_.size(), firstRecordStartingAfter(t1) + 1)};
}

uint64_t CaptureWindow::offsetOf(size_t record) const {
  return record < index_.size() ? index_[record].offset : dataEnd_;
}

void CaptureWindow::feedAhead(size_t from, size_t to, FrameDecoder *dec,
                              const std::atomic<bool> *stop) const {
  const uint64_t begin = offsetOf(from), end = offsetOf(to);
  if (!file_.seek(qint64(begin))) return;
  // A quarter MiB read at a time: the decoder's buffer (one per segment's
  // reader) grows to twice a chunk, its pages new each segment (1 MiB
  // chunks: 2-3 MiB of page faults per segment, 4% of an export's).
  static constexpr qint64 kChunk = 256 << 10;
  uint64_t at = begin;
  dec->feedAhead([&]() -> QByteArray {
    if (at >= end || (stop && *stop)) return QByteArray();
    QByteArray buf = file_.read(std::min<qint64>(kChunk, qint64(end - at)));
    at += uint64_t(buf.size());
    return buf;
  });
}

CaptureWindow::Sequence::Sequence(const CaptureWindow &cw, SessionModel *model, int64_t t0,
                                  const std::vector<CarriedWait> *carried)
    : cw_(cw), model_(model), dec_(std::make_unique<FrameDecoder>(model)) {
  next_ = cw.prime(t0, dec_.get());
  if (carried && next_ < cw.index_.size()) feedCarried(*carried, cw.lo_[next_], dec_.get());
}

int64_t CaptureWindow::knownFrom(int64_t t0) const {
  const size_t from = firstRecordEndingAfter(warmUpFrom(t0));
  return from < lo_.size() ? lo_[from] : lastNs();
}

std::vector<CaptureWindow::CarriedWait> CaptureWindow::waitsOpenAt(const SessionModel &m,
                                                                   int64_t t0) const {
  // Waits overlapping [from, t0] clipped to it: those that start at its
  // start began before it.
  const int64_t from = knownFrom(t0);
  std::vector<CarriedWait> out;
  std::vector<WaitRecord> waits;
  for (int k = 0; k < m.syncObjectCount() && from < t0; k++) {
    const SyncObjectInfo &o = m.syncObject(k);
    m.waits(o.id, TimeRange{from, t0}, &waits);
    for (const WaitRecord &w : waits) {
      if (w.start > from || w.end < t0 || w.count != 1) continue;
      CarriedWait c;
      c.tid = w.waiter;
      c.object = o.id;
      c.holder = w.holder;
      c.state = wirestate_detail::kWireOfFinal[int(w.state)];
      out.push_back(c);
    }
  }
  const std::vector<CarriedWait> joins = joinsAt(m, t0);
  out.insert(out.end(), joins.begin(), joins.end());
  return out;
}

std::vector<CaptureWindow::CarriedWait> CaptureWindow::joinsAt(const SessionModel &m,
                                                               int64_t t0) {
  std::vector<CarriedWait> out;
  for (int i = 0; i < m.threadCount(); i++) {
    StateInterval iv;
    if (!m.stateAt(i, t0, &iv) || iv.state != FinalState::BlockedJoin) continue;
    CarriedWait c;
    c.tid = m.thread(i).tid;
    c.object = iv.object;
    c.state = wirestate_detail::kWireOfFinal[int(FinalState::BlockedJoin)];
    out.push_back(c);
  }
  return out;
}

void CaptureWindow::feedCarried(const std::vector<CarriedWait> &carried, int64_t t,
                                FrameDecoder *dec) {
  if (carried.empty() || t <= 0) return;
  const size_t n = carried.size();
  std::vector<uint32_t> tid(n), object(n), holder(n);
  std::vector<int64_t> delta(n, 0);
  std::vector<Threadmon__ThreadState> state(n);
  for (size_t i = 0; i < n; i++) {
    tid[i] = carried[i].tid;
    object[i] = carried[i].object;
    holder[i] = carried[i].holder;
    state[i] = Threadmon__ThreadState(carried[i].state);
  }
  Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
  tr.base_ns = uint64_t(t);
  tr.n_tid = tr.n_delta_ns = tr.n_state = tr.n_object_id = tr.n_holder_tid = n;
  tr.tid = tid.data();
  tr.delta_ns = delta.data();
  tr.state = state.data();
  tr.object_id = object.data();
  tr.holder_tid = holder.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
  f.transitions = &tr;
  const size_t size = threadmon__frame__get_packed_size(&f);
  std::vector<uint8_t> framed(TM_FRAME_PREFIX_BYTES + size);
  threadmon__frame__pack(&f, framed.data() + TM_FRAME_PREFIX_BYTES);
  tm_frame_prefix_encode(framed.data(), framed.data() + TM_FRAME_PREFIX_BYTES, uint32_t(size));
  dec->feed(reinterpret_cast<const char *>(framed.data()), framed.size());
}

CaptureWindow::Sequence::~Sequence() = default;

void CaptureWindow::Sequence::carrySamplesFrom(const SessionModel &before) {
  if (!fed_ && next_ < cw_.index_.size())
    model_->carrySamples(before.samplesBefore(cw_.lo_[next_]));
}

bool CaptureWindow::Sequence::atEnd() const { return next_ >= cw_.index_.size(); }

CaptureLoadResult CaptureWindow::Sequence::readThrough(int64_t t1,
                                                       const std::atomic<bool> *stop) {
  return readTo(std::min(cw_.index_.size(), cw_.firstRecordStartingAfter(t1) + 1), stop);
}

CaptureLoadResult CaptureWindow::Sequence::readPast(int64_t t1, const std::atomic<bool> *stop) {
  CaptureLoadResult res = readThrough(t1, stop);
  // Three ticks: a tick's frames carry the switch records of the probe's
  // own work at the tick before (its thread's CPU split is not known
  // before), and a later sample may split a sleep into a wait for a CPU.
  // On the e2e tests' captures in 1 s windows, the lines that differ from
  // a whole read: 1 tick 522, 2 ticks 396, 3 ticks 364, 5 ticks 556 (a
  // window's findings then see too far past its end).
  constexpr int kTicksPast = 3;
  for (int tick = 0; tick < kTicksPast; tick++) {
    const int64_t after = tick ? model_->latestNs() : t1;
    while (res.status == CaptureLoadResult::Complete && !atEnd() && model_->latestNs() <= after &&
           !(stop && *stop)) {
      const CaptureLoadResult more = readTo(next_ + 1, stop);
      res.status = more.status;
      res.message = more.message;
      res.frames += more.frames;
      res.goodBytes = more.goodBytes;
    }
  }
  return res;
}

CaptureLoadResult CaptureWindow::Sequence::readTo(size_t to, const std::atomic<bool> *stop) {
  CaptureLoadResult res;
  if (status_ == CaptureLoadResult::Complete && next_ < to && !dec_->failed()) {
    if (!fed_ && next_ > 0) model_->knownFrom(cw_.lo_[next_]);  // as load(t0, t1)
    fed_ = true;
    cw_.feedAhead(next_, to, dec_.get(), stop);
    next_ = to;
    if (!dec_->failed()) cw_.applyLaterStacks(to, model_);
  }
  const uint64_t read = dec_->framesRead();
  res.frames = read - frames_;
  frames_ = read;
  res.goodBytes = dec_->goodOffset();
  if (status_ != CaptureLoadResult::Complete) {
    res.status = status_;
  } else if (dec_->failed()) {
    res.status = status_ = CaptureLoadResult::Damaged;
    res.message = dec_->error();
  } else if (dec_->pendingBytes() > 0 && !(stop && *stop)) {
    res.status = status_ = CaptureLoadResult::Damaged;
    res.message = QStringLiteral(
                      "a record's length word runs past byte %1, where the next "
                      "record begins: the window's frames after it are lost")
                      .arg(cw_.offsetOf(to));
  } else {
    res.status = CaptureLoadResult::Complete;
  }
  if (to == cw_.index_.size()) model_->markEnded();
  return res;
}

uint64_t CaptureWindow::bytesOf(int64_t t0, int64_t t1) const {
  const auto [from, to] = recordsOf(t0, t1);
  if (from >= to) return 0;
  return (to < index_.size() ? index_[to].offset : dataEnd_) - index_[from].offset;
}

size_t CaptureWindow::prime(int64_t t0, FrameDecoder *dec) const {
  const size_t from = firstRecordEndingAfter(warmUpFrom(t0));
  dec->feed(header_.constData(), size_t(header_.size()));
  QByteArray framed;
  for (const Description &d : descriptions_) {
    if (d.record >= from) break;
    framed.resize(TM_FRAME_PREFIX_BYTES + d.payload.size());
    const auto *p = reinterpret_cast<const uint8_t *>(d.payload.constData());
    tm_frame_prefix_encode(reinterpret_cast<uint8_t *>(framed.data()), p,
                           uint32_t(d.payload.size()));
    std::copy(d.payload.begin(), d.payload.end(), framed.begin() + TM_FRAME_PREFIX_BYTES);
    dec->feed(framed.constData(), size_t(framed.size()));
  }
  return from;
}

CaptureLoadResult CaptureWindow::load(int64_t t0, int64_t t1, SessionModel *model,
                                      const std::atomic<bool> *stop,
                                      const std::vector<CarriedWait> *carried) const {
  CaptureLoadResult res;
  const auto [from, to] = recordsOf(t0, t1);
  FrameDecoder dec(model);
  prime(t0, &dec);
  if (carried && from < to) feedCarried(*carried, lo_[from], &dec);
  if (from > 0 && from < to) model->knownFrom(lo_[from]);
  if (from < to) feedAhead(from, to, &dec, stop);
  if (from < to && !dec.failed()) applyLaterStacks(to, model);
  res.frames = dec.framesRead();
  res.goodBytes = dec.goodOffset();
  if (dec.failed()) {
    res.status = CaptureLoadResult::Damaged;
    res.message = dec.error();
  } else if (dec.pendingBytes() > 0 && !(stop && *stop)) {
    // The records read end where the next one begins: a frame still open
    // there had a length word that lies (the rest of the window was taken
    // for its body and is lost).
    res.status = CaptureLoadResult::Damaged;
    res.message = QStringLiteral(
                      "a record's length word runs past byte %1, where the next "
                      "record begins: the window's frames after it are lost")
                      .arg(to < index_.size() ? index_[to].offset : dataEnd_);
  } else {
    res.status = CaptureLoadResult::Complete;
  }
  if (to == index_.size()) model->markEnded();
  return res;
}

}  // namespace tmon
