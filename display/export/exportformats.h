// The export formats by name: their file extension, framing, sink, and the
// one line saying what each cannot hold.
#ifndef THREADMON_EXPORTFORMATS_H
#define THREADMON_EXPORTFORMATS_H

#include <QString>

#include <memory>

#include "exportwalk.h"

namespace tmon {

class ExportOutput;

struct ExportFormat {
  const char *name;       // "perfetto", "chrome", "pprof"
  const char *extension;  // ".pftrace", ...
  bool gzip;
  const char *openHint;   // how to open the result
  const char *drops;      // what the format cannot hold
};

// nullptr for an unknown name.
const ExportFormat *exportFormat(const QString &name);
const ExportFormat *const *exportFormats();  // nullptr-terminated
// capture.tmcap -> capture.pftrace (beside it).
QString exportFileName(const QString &capture, const ExportFormat &f);
// f's openHint for the file written at path, a command one can paste.
QString exportOpenHint(const ExportFormat &f, const QString &path);
// holds: the pprof profile of hold times instead of waits.
std::unique_ptr<ExportSink> makeExportSink(const ExportFormat &f, ExportOutput *out, bool holds);
// Seconds from the session start ([fromS, toS); negative: open) as session time.
TimeRange relativeRange(const QString &capture, double fromS, double toS);

}  // namespace tmon

#endif
