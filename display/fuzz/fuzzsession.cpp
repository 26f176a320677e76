#include "fuzzsession.h"

#include <QCoreApplication>

#include "framedecoder.h"
#include "sessionmodel.h"
#include "streammutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  // The model's change timer wants an application object (never run).
  static QCoreApplication app(*argc, *argv);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  return tmfuzz::mutate(data, size, maxSize, seed, LLVMFuzzerMutate);
}

namespace tmfuzz {

bool feed(tmon::SessionModel *model, const uint8_t *data, size_t size) {
  tmon::FrameDecoder decoder(model);
  const size_t first = size / 3;
  decoder.feed(data, first);
  decoder.feed(data + first, size - first);
  if (!decoder.headerSeen()) return false;
  model->markEnded();
  return true;
}

}  // namespace tmfuzz
