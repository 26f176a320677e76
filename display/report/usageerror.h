// One line for a command line a tool cannot take (what is wrong, where the
// options are), instead of its whole usage: a user who mistyped one flag
// should not have to find it in twenty lines.
#pragma once

#include <QString>
#include <QStringList>
#include <cstdio>

namespace tmon {

// Exit status 1, as the tools' other usage errors.
inline int usageError(const char *tool, const QString &what) {
  std::fprintf(stderr, "%s: %s (see %s --help)\n", tool, qPrintable(what), tool);
  return 1;
}

// An argument starting with '-' that the tool did not take: an option
// missing its value (one of valueOptions, last on the line) or unknown.
inline int badOption(const char *tool, const QString &arg, const QStringList &valueOptions) {
  return usageError(
      tool, valueOptions.contains(arg) ? arg + " wants a value" : "unknown option '" + arg + "'");
}

}  // namespace tmon
