// The display's answers to a probe's Hello (docs/format.md, "Replies"):
// whole frames, prefix included, ready to write to the socket.
#ifndef THREADMON_NET_REPLYFRAMES_H
#define THREADMON_NET_REPLYFRAMES_H

#include <QByteArray>
#include <QString>

#include "threadmon.pb-c.h"

namespace tmnet {

QByteArray welcomeFrame();
QByteArray refusalFrame(Threadmon__RefusalReason reason, const QString &text);

}  // namespace tmnet

#endif
