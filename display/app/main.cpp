// threadmon-display: live view of threadmon probes and replay of captures.
#include <QApplication>
#include <cstdio>
#include <cstring>
#include <memory>

#include "commandline.h"
#include "mainwindow.h"
#include "replaycontrols.h"
#include "screenshot.h"
#include "sessionview.h"

#include <QTabWidget>

namespace {

// --help and --version print and exit: they must work where no display
// server is, and QApplication aborts there before parsing anything.
bool onlyPrints(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!std::strcmp(a, "--")) break;
    for (const char *opt : {"-h", "--help", "-?", "--help-all", "-v", "--version"})
      if (!std::strcmp(a, opt)) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char **argv) {
  // Before QApplication: the platform plugin warns while it starts.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--screenshot", 12) == 0) installScreenshotMessageFilter();
  const std::unique_ptr<QCoreApplication> app(onlyPrints(argc, argv)
                                                  ? new QCoreApplication(argc, argv)
                                                  : new QApplication(argc, argv));
  QCoreApplication::setApplicationName(QStringLiteral("threadmon-display"));
  QCoreApplication::setApplicationVersion(QStringLiteral(THREADMON_VERSION));

  DisplayOptions opt;
  const QString error = parseDisplayOptions(QCoreApplication::arguments(), &opt);
  if (!error.isEmpty()) {
    std::fprintf(stderr, "threadmon-display: %s\n", qPrintable(error));
    return 2;
  }
  for (const QString &w : opt.warnings) std::fprintf(stderr, "%s\n", qPrintable(w));
  if (!qobject_cast<QApplication *>(app.get())) {
    // onlyPrints() saw --help or --version, but as an option's value.
    std::fprintf(stderr, "threadmon-display: an option's value looks like --help or --version\n");
    return 2;
  }

  if (!opt.screenshot.isEmpty()) {
    const QStringList wh = opt.size.split('x');
    const QString err = screenshotCapture(opt.open.first(), opt.view, opt.at,
                                          QSize(wh[0].toInt(), wh[1].toInt()), opt.screenshot,
                                          opt.object);
    if (!err.isEmpty()) {
      std::fprintf(stderr, "threadmon-display: %s\n", qPrintable(err));
      return 1;
    }
    return 0;
  }

  MainWindow window;
  window.setFlightOptions(opt.flight);
  const QString listenError =
      opt.stdinStreams && !opt.listenSet ? QString() : window.listen(opt.listen, opt.token);
  if (!listenError.isEmpty()) {
    std::fprintf(stderr, "threadmon-display: %s\n", qPrintable(listenError));
    return 1;
  }
  if (opt.stdinStreams) window.readStdin();
  for (const QString &f : opt.open) {
    window.openCaptureFile(f, opt.at, [opt](tmui::SessionView *page) {
      tmui::ViewKind kind;
      if (tmui::parseViewKind(opt.view, &kind)) page->showView(kind);
      if (opt.at >= 0 && page->replay()) page->replay()->seek(opt.at);
      if (!opt.object.isEmpty() && !selectSyncObject(page, opt.object))
        std::fprintf(stderr, "threadmon-display: no sync object '%s'\n", qPrintable(opt.object));
    });
  }
  window.show();
  return QApplication::exec();
}
