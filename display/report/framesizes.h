// threadmon-report --sizes: where a capture's bytes go. Bytes per frame
// kind and per field of the larger kinds (as encoded, before block
// compression), the bytes on disk, and the capture's rate.
#ifndef THREADMON_FRAMESIZES_H
#define THREADMON_FRAMESIZES_H

#include <QString>

// The table for the capture at path, or a one-line error in *error (then
// the text is what could be read before it, possibly empty).
QString frameSizesText(const QString &path, QString *error);

#endif
