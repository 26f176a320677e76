// MuxReader: the streams that `threadmon serve-stdio` sends home over ssh
// (scripts/threadmon, "over SSH"; docs/user-guide.md, "Remote"). A line
// "threadmon-serve WIRE VERSION", then records of a 9-byte head (kind, u32
// LE stream, u32 LE body length) and a body: O a stream opens (body: the
// remote pid), D its bytes, E its end, X the session's end (body: the exit
// status), F the remote side could not start (body: "STATUS text"). Each
// stream becomes a ProbeConnection fed its bytes, checked like a socket's;
// the app turns the accepted ones into session tabs as it does a
// listener's. The peer is whoever the launcher reached through ssh: no
// token is asked for.
#ifndef THREADMON_NET_MUXREADER_H
#define THREADMON_NET_MUXREADER_H

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QString>
#include <map>

namespace tmnet {

class ProbeConnection;

class MuxReader : public QObject {
  Q_OBJECT
 public:
  static constexpr int kWire = 1;
  static constexpr quint32 kMaxBody = 1u << 20;

  // label names the source in messages ("ssh web1").
  explicit MuxReader(const QString &label, QObject *parent = nullptr);
  ~MuxReader() override;

  void consume(const QByteArray &bytes);
  // The source closed: every stream still open ends (cut short).
  void finish();
  QString label() const { return label_; }
  bool finished() const { return finished_; }

 signals:
  // A stream's Hello passed; the connection is parented to the reader.
  void sessionAccepted(tmnet::ProbeConnection *connection);
  // The session ended ("exit status 3"), could not start, or the source
  // broke off: one line.
  void ended(const QString &how);

 private:
  void record(char kind, quint32 stream, const QByteArray &body);
  void fail(const QString &why);
  void endStream(quint32 stream);

  QString label_;
  QByteArray pending_;
  bool versionSeen_ = false;
  bool finished_ = false;
  // Guarded: a session's tab (its owner) may be closed while its stream runs.
  std::map<quint32, QPointer<ProbeConnection>> open_;
};

}  // namespace tmnet

#endif
