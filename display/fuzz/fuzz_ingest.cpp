// libFuzzer target: a stream into the model, then what every view needs
// first, each thread's states and intervals (which derive its timeline from
// its transitions, switch records and samples). Lighter than fuzz-report,
// so most of a long run's executions go here (docs/fuzzing.md).
#include <algorithm>

#include "fuzzsession.h"
#include "sessionmodel.h"

using namespace tmon;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SessionModel model;
  if (!tmfuzz::feed(&model, data, size)) return 0;
  const TimeRange whole = model.resolve(Window::wholeRun());
  // A few threads reach every path; all of them would only slow the run.
  for (int i = 0; i < std::min(8, model.threadCount()); i++) {
    model.threadStates(i, whole);
    model.intervals(i, whole);
    model.lwpDelta(i, whole);
  }
  model.ticks(whole);
  model.waitMatrix(whole);
  return 0;
}
