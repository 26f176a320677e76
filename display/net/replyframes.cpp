#include "replyframes.h"

#include "tmwire.h"

namespace tmnet {

static QByteArray framed(const Threadmon__Frame &frame) {
  const size_t len = threadmon__frame__get_packed_size(&frame);
  QByteArray out(static_cast<qsizetype>(TM_FRAME_PREFIX_BYTES + len), Qt::Uninitialized);
  auto *bytes = reinterpret_cast<uint8_t *>(out.data());
  threadmon__frame__pack(&frame, bytes + TM_FRAME_PREFIX_BYTES);
  tm_frame_prefix_encode(bytes, bytes + TM_FRAME_PREFIX_BYTES, static_cast<uint32_t>(len));
  return out;
}

QByteArray welcomeFrame() {
  Threadmon__Welcome welcome = THREADMON__WELCOME__INIT;
  Threadmon__Frame frame = THREADMON__FRAME__INIT;
  frame.body_case = THREADMON__FRAME__BODY_WELCOME;
  frame.welcome = &welcome;
  return framed(frame);
}

QByteArray refusalFrame(Threadmon__RefusalReason reason, const QString &text) {
  QByteArray utf8 = text.toUtf8();
  Threadmon__Refusal refusal = THREADMON__REFUSAL__INIT;
  refusal.reason = reason;
  refusal.text = utf8.data();
  Threadmon__Frame frame = THREADMON__FRAME__INIT;
  frame.body_case = THREADMON__FRAME__BODY_REFUSAL;
  frame.refusal = &refusal;
  return framed(frame);
}

}  // namespace tmnet
