// Names of code and data as the probe sends them, split into their parts
// and made readable: the one place that turns "module!_ZN3app4workEv+0x1c
// (app.cpp:12)" into "module!app::work()+0x1c (app.cpp:12)". Everything a
// view, the report or a finding shows goes through here when it is read.
#ifndef THREADMON_SYMBOLNAME_H
#define THREADMON_SYMBOLNAME_H

#include <QString>

#include <cstdint>

namespace tmon {

// A stack frame or start routine: "module!function+0xoff (file:line)",
// "module+0xoff" or "0xaddr"; every part but the first may be missing.
// Split from the right, since a demangled function may hold '!', '+', " ("
// ("operator!=", "f(void (*)(int))").
struct FrameParts {
  QString module;
  QString function;
  QString offset;    // "0x1c", "" when none
  QString location;  // "app.cpp:12", "" when none
  QString text() const;  // joined again, as the probe writes it
};
FrameParts splitFrame(const QString &frame);

// The frame with its function demangled; a std::thread state's _M_run
// named by the callable it runs ("main::{lambda()#1}").
QString readableFrame(const QString &probeFrame);

// A sync object's symbol as the probe sends it: "name+0xoff", with
// " (file.c)" when the name is not unique in its module.
struct SymbolParts {
  QString name;  // demangled
  QString raw;   // as in the module's symbol table
  uint64_t offset = 0;
  QString file;
};
SymbolParts splitSymbol(const QString &probeSymbol);

}  // namespace tmon

#endif
