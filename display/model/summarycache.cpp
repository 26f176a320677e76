#include "summarycache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "runsummary.h"
#include "summaryrecord.h"
#include "tmcreate.h"
#include "tmwire.h"

namespace tmon {

namespace {

// The file (little-endian): magic, u32 version, u32 0, the identity (u64
// size, i64 mtime ns, u64 session id), i64 the run's start, u64 buckets,
// u32 raw length, u32 0; one zstd frame of raw length bytes: a framed
// Summary frame (length, CRC-32C, payload) per bucket; u32 CRC-32C of every
// byte before it.
constexpr char kMagic[8] = {'T', 'M', 'S', 'U', 'M', 'C', '\r', '\n'};
// 2: the idle state (time off a CPU waiting for work, sleeping in version 1
// caches, derived anew).
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderBytes = 64, kTrailerBytes = 4;
// A cache never holds more than RunSummary does (kMaxCells, under 256 bytes
// a cell): a crafted length cannot make a reader allocate more.
constexpr uint64_t kMaxRaw = uint64_t(RunSummary::kMaxCells) * 256;

void put(std::vector<uint8_t> *b, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) b->push_back(uint8_t(v >> (8 * i)));
}

uint64_t get(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

}  // namespace

bool CaptureIdentity::of(const QString &path, uint64_t sessionId, CaptureIdentity *out) {
  struct stat st {};
  if (stat(QFile::encodeName(path).constData(), &st) != 0) return false;
  out->size = uint64_t(st.st_size);
  out->ownerUid = st.st_uid;
  out->mtimeNs = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  out->sessionId = sessionId;
  return true;
}

SummaryCache::SummaryCache(const QString &capture, const CaptureIdentity &id)
    : capture_(capture), id_(id) {}

QString SummaryCache::sidecarPath() const {
  return capture_ + QStringLiteral(".tmsum");
}

QString SummaryCache::userCachePath() const {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation);
  return QStringLiteral("%1/threadmon/%2-%3-%4.tmsum")
      .arg(dir)
      .arg(id_.sessionId, 16, 16, QLatin1Char('0'))
      .arg(id_.size)
      .arg(id_.mtimeNs);
}

bool SummaryCache::load(RunSummary *out, QString *notice) const {
  notice->clear();
  for (const QString &file : {sidecarPath(), userCachePath()}) {
    if (!QFileInfo::exists(file)) continue;
    QString why;
    if (readFile(file, id_, out, &why, id_.ownerUid)) return true;
    if (!notice->isEmpty()) *notice += QStringLiteral("; ");
    *notice += QStringLiteral("ignored the overview cache %1: %2").arg(file, why);
  }
  return false;
}

QString SummaryCache::save(const RunSummary &sum, QString *error) const {
  if (writeFile(sidecarPath(), id_, sum, error)) return sidecarPath();
  const QString user = userCachePath();
  if (QDir().mkpath(QFileInfo(user).path()) && writeFile(user, id_, sum, error)) return user;
  return QString();
}

bool SummaryCache::writeFile(const QString &file, const CaptureIdentity &id, const RunSummary &sum,
                             QString *error) {
  const std::vector<uint32_t> tids = sum.tids();
  std::vector<uint8_t> raw;
  for (size_t k = 0; k < sum.buckets(); k++) {
    const int64_t b0 = sum.startNs() + int64_t(k) * RunSummary::kBucketNs;
    SummaryRecord rec(b0, b0 + RunSummary::kBucketNs);
    for (uint32_t tid : tids) rec.add(tid, sum.bucket(tid, k));
    const std::vector<uint8_t> payload = rec.pack();
    uint8_t prefix[TM_FRAME_PREFIX_BYTES];
    tm_frame_prefix_encode(prefix, payload.data(), uint32_t(payload.size()));
    raw.insert(raw.end(), prefix, prefix + TM_FRAME_PREFIX_BYTES);
    raw.insert(raw.end(), payload.begin(), payload.end());
  }
  std::vector<uint8_t> out(kMagic, kMagic + sizeof kMagic);
  put(&out, kVersion, 4);
  put(&out, 0, 4);
  put(&out, id.size, 8);
  put(&out, uint64_t(id.mtimeNs), 8);
  put(&out, id.sessionId, 8);
  put(&out, uint64_t(sum.startNs()), 8);
  put(&out, sum.buckets(), 8);
  put(&out, raw.size(), 4);
  put(&out, 0, 4);
  out.resize(kHeaderBytes + ZSTD_compressBound(raw.size()));
  const size_t z = ZSTD_compress(out.data() + kHeaderBytes, out.size() - kHeaderBytes, raw.data(),
                                 raw.size(), 3);
  if (ZSTD_isError(z)) {
    *error = QString::fromUtf8(ZSTD_getErrorName(z));
    return false;
  }
  out.resize(kHeaderBytes + z);
  put(&out, tm_crc32c(out.data(), out.size()), 4);
  // Written aside under a fresh name and renamed: a reader never sees half
  // of one, and a link planted at the name (beside a capture in a shared
  // directory) is replaced, not followed as QSaveFile would.
  char tmp[4200];
  const QByteArray name = QFile::encodeName(file);
  const int fd = tm_create_temp(name.constData(), ".part", tmp, sizeof tmp);
  bool ok = fd >= 0;
  for (size_t done = 0; ok && done < out.size();) {
    const ssize_t w = ::write(fd, out.data() + done, out.size() - done);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    done += ok ? size_t(w) : 0;
  }
  const int err = errno;
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  if (ok && ::rename(tmp, name.constData()) == 0) return true;
  *error = QStringLiteral("%1: %2").arg(file, QString::fromLocal8Bit(strerror(ok ? errno : err)));
  if (fd >= 0) ::unlink(tmp);
  return false;
}

bool SummaryCache::readFile(const QString &file, const CaptureIdentity &id, RunSummary *out,
                            QString *why, uid_t ownerUid) {
  // Non-blocking: a FIFO's open would wait for a writer that never comes.
  const int fd =
      ::open(QFile::encodeName(file).constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    *why = QString::fromLocal8Bit(strerror(errno));
    if (fd >= 0) ::close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != ownerUid)) {
    *why = S_ISREG(st.st_mode)
               ? QStringLiteral("written by another user (uid %1), not by the capture's owner")
                     .arg(st.st_uid)
               : QStringLiteral("not a regular file");
    ::close(fd);
    return false;
  }
  QFile f;
  if (!f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
    *why = f.errorString();
    ::close(fd);
    return false;
  }
  if (f.size() < qint64(kHeaderBytes + kTrailerBytes) || f.size() > qint64(kMaxRaw)) {
    *why = QStringLiteral("not a summary cache (size)");
    return false;
  }
  const QByteArray bytes = f.readAll();
  const auto *p = reinterpret_cast<const uint8_t *>(bytes.constData());
  const size_t n = size_t(bytes.size());
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    *why = QStringLiteral("not a summary cache");
    return false;
  }
  if (get(p + n - kTrailerBytes, 4) != tm_crc32c(p, n - kTrailerBytes)) {
    *why = QStringLiteral("damaged (checksum mismatch)");
    return false;
  }
  if (get(p + 8, 4) != kVersion) {
    *why = QStringLiteral("written by another version");
    return false;
  }
  const CaptureIdentity key{get(p + 16, 8), int64_t(get(p + 24, 8)), get(p + 32, 8)};
  if (!(key == id)) {
    *why = QStringLiteral("stale (the capture's size, time or session differ)");
    return false;
  }
  const int64_t start = int64_t(get(p + 40, 8));
  const uint64_t buckets = get(p + 48, 8), rawLen = get(p + 56, 4);
  const uint8_t *z = p + kHeaderBytes;
  const size_t zLen = n - kHeaderBytes - kTrailerBytes;
  if (buckets > RunSummary::kMaxCells || rawLen > kMaxRaw ||
      ZSTD_getFrameContentSize(z, zLen) != rawLen) {
    *why = QStringLiteral("damaged (header)");
    return false;
  }
  std::vector<uint8_t> raw(rawLen);
  if (ZSTD_decompress(raw.data(), raw.size(), z, zLen) != rawLen) {
    *why = QStringLiteral("damaged (does not decompress)");
    return false;
  }
  RunSummary sum;
  sum.setStart(start, size_t(buckets));
  for (size_t at = 0; at < raw.size();) {
    const size_t left = raw.size() - at;
    const uint8_t *frame = raw.data() + at;
    const size_t len = left >= TM_FRAME_PREFIX_BYTES ? size_t(get(frame, 4)) : left;
    SummaryRecord rec;
    if (left < TM_FRAME_PREFIX_BYTES || len > left - TM_FRAME_PREFIX_BYTES ||
        get(frame + 4, 4) != tm_crc32c(frame + TM_FRAME_PREFIX_BYTES, len) ||
        !rec.unpack(frame + TM_FRAME_PREFIX_BYTES, uint32_t(len)) || rec.startNs() < start ||
        (rec.startNs() - start) % RunSummary::kBucketNs) {
      *why = QStringLiteral("damaged (bucket at byte %1)").arg(at);
      return false;
    }
    const size_t k = size_t((rec.startNs() - start) / RunSummary::kBucketNs);
    for (size_t i = 0; i < rec.threads(); i++) sum.addBucket(rec.tid(i), k, rec.states(i));
    at += TM_FRAME_PREFIX_BYTES + len;
  }
  if (sum.buckets() != buckets) {
    *why = QStringLiteral("damaged (%1 of %2 buckets)").arg(sum.buckets()).arg(buckets);
    return false;
  }
  *out = std::move(sum);
  return true;
}

}  // namespace tmon
