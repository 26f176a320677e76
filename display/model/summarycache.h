// SummaryCache: a RunSummary built from a capture's detail (SummaryBuild),
// kept on disk so that the capture's second open draws its whole run at once
// (docs/format.md, "The summary cache"). It is keyed by the capture's identity
// (size, modification time, session id) and checked whole (CRC-32C) before
// any of it is used; a stale or damaged one is ignored with one line, never
// trusted, and its values pass the same checks as Summary records.
//
// Where: next to the capture (CAPTURE.tmsum) when its directory is writable,
// so that it goes wherever the capture goes and is deleted with it; else in
// $XDG_CACHE_HOME/threadmon/ (captures on read-only or shared storage),
// named by the identity.
#ifndef THREADMON_SUMMARYCACHE_H
#define THREADMON_SUMMARYCACHE_H

#include <QString>
#include <cstdint>

namespace tmon {

class RunSummary;

struct CaptureIdentity {
  uint64_t size = 0;
  int64_t mtimeNs = 0;  // since the epoch
  uint64_t sessionId = 0;
  uid_t ownerUid = 0;  // who owns the capture (not part of the identity)
  // Of the file at path (its session id given); false when it cannot be read.
  static bool of(const QString &path, uint64_t sessionId, CaptureIdentity *out);
  bool operator==(const CaptureIdentity &o) const {
    return size == o.size && mtimeNs == o.mtimeNs && sessionId == o.sessionId;
  }
};

class SummaryCache {
 public:
  SummaryCache(const QString &capture, const CaptureIdentity &id);
  QString sidecarPath() const;
  QString userCachePath() const;

  // The summary from the first cache found (the sidecar, then the user's);
  // false when none is usable, with *notice one line for each found but
  // stale or damaged (empty when there was none).
  bool load(RunSummary *out, QString *notice) const;
  // Writes sum to the sidecar, or to the user's cache when the sidecar
  // cannot be written; returns the path written, or empty with *error.
  QString save(const RunSummary &sum, QString *error) const;

  // One file: false with *why (a few words) when it is not a cache of id,
  // damaged, not a regular file (a FIFO planted beside a capture in a
  // shared directory hung the display's open) or owned by someone else than
  // this user and the capture's owner, ownerUid (a neighbour's forged
  // overview); a symbolic link is not followed.
  static bool readFile(const QString &file, const CaptureIdentity &id, RunSummary *out,
                       QString *why, uid_t ownerUid);
  static bool writeFile(const QString &file, const CaptureIdentity &id, const RunSummary &sum,
                        QString *error);

 private:
  QString capture_;
  CaptureIdentity id_;
};

}  // namespace tmon

#endif
