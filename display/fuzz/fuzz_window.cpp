// libFuzzer target: the input as a capture file read through its index
// (CaptureWindow: the index at the tail or the scan, the descriptions), its
// Summary records taken (RunSummary::read), and a window loaded. A crafted
// summary must never crash nor give a bucket a negative time or more than
// its width: such a result stops the run as a crash would.
#include <sys/mman.h>
#include <unistd.h>

#include <QString>
#include <cstdint>
#include <cstdlib>

#include "capturewindow.h"
#include "runsummary.h"
#include "sessionmodel.h"

using namespace tmon;

namespace {

void checkBucket(const StateTimes &st) {
  if (st.lifetimeNs < 0 || st.lifetimeNs > RunSummary::kBucketNs) abort();
  for (int64_t ns : st.ns)
    if (ns < 0 || ns > RunSummary::kBucketNs) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // CaptureWindow reads a file: the input is one in memory.
  static const int fd = memfd_create("fuzz-window", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size)) return 0;
  CaptureWindow cw;
  if (!cw.open(QStringLiteral("/proc/self/fd/%1").arg(fd))) return 0;
  RunSummary sum;
  if (sum.read(cw)) {
    for (uint32_t tid : sum.tids())
      for (size_t k = 0; k < sum.buckets(); k++) checkBucket(sum.bucket(tid, k));
    const TimeRange run{sum.startNs(), sum.endNs()};
    for (uint32_t tid : sum.tids())
      if (sum.states(tid, run).lifetimeNs < 0) abort();
  }
  SessionModel model;
  const int64_t first = cw.firstNs();  // any time a crafted index holds
  cw.load(first, first > INT64_MAX - 1'000'000'000 ? INT64_MAX : first + 1'000'000'000, &model);
  return 0;
}
