#include "screenshot.h"

#include <unistd.h>

#include <QApplication>
#include <QFile>
#include <QTimer>
#include <QtGlobal>
#include <functional>
#include <vector>

#include "captureopen.h"
#include "modelview.h"
#include "replaycontrols.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "syncview.h"
#include "tmcreate.h"
#include "wholerunstrip.h"

namespace {
QtMessageHandler previousHandler = nullptr;

// Into a new file at out (tmcreate.h): never through a link planted there.
QString savePng(const QImage &image, const QString &out) {
  const int fd = tm_create_replacing(QFile::encodeName(out).constData());
  QFile f;
  if (fd < 0 || !f.open(fd, QIODevice::WriteOnly, QFileDevice::AutoCloseHandle)) {
    if (fd >= 0) ::close(fd);
    return QStringLiteral("cannot write %1").arg(out);
  }
  return image.save(&f, "PNG") ? QString() : QStringLiteral("cannot write %1").arg(out);
}

void screenshotMessage(QtMsgType type, const QMessageLogContext &context, const QString &msg) {
  // Known, harmless: the offscreen platform has no runtime dir and no window manager.
  if (type == QtWarningMsg &&
      (msg.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set")) ||
       msg == QLatin1String("This plugin does not support propagateSizeHints()")))
    return;
  if (previousHandler) previousHandler(type, context, msg);
}

// Runs the event loop until done(), asleep between events. processEvents
// with a time limit ignores WaitForMoreEvents and spins, taking the core the
// views' worker threads compute on; the timer wakes the loop to check again.
void waitUntil(const std::function<bool()> &done) {
  QTimer poll;
  poll.start(20);
  while (!done()) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
}
}  // namespace

void installScreenshotMessageFilter() { previousHandler = qInstallMessageHandler(screenshotMessage); }

QImage renderView(tmui::SessionView *page, tmon::ViewKind kind, double atSeconds, QSize size) {
  if (atSeconds >= 0 && page->replay()) page->replay()->seek(atSeconds);
  tmui::ModelView *view = page->view(kind);
  // Rendered alone, detached from its dock, at the requested size.
  view->setParent(nullptr);
  view->resize(size);
  view->setAttribute(Qt::WA_DontShowOnScreen);
  view->show();
  QApplication::processEvents();
  view->refreshNow();
  waitUntil([view] { return !view->busy(); });
  QApplication::processEvents();
  const QImage image = view->grab().toImage();
  view->hide();
  return image;
}

QImage renderPage(tmui::SessionView *page, double atSeconds, QSize size) {
  if (atSeconds >= 0 && page->replay()) page->replay()->seek(atSeconds);
  page->resize(size);
  page->setAttribute(Qt::WA_DontShowOnScreen);
  page->show();
  QApplication::processEvents();
  // The views on screen: the raised tab of each dock and the timeline.
  std::vector<tmui::ModelView *> shown;
  for (const tmon::ViewInfo &v : tmon::kViews)
    if (page->view(v.kind)->showing()) shown.push_back(page->view(v.kind));
  for (tmui::ModelView *v : shown) v->refreshNow();
  waitUntil([&shown] {
    for (tmui::ModelView *v : shown)
      if (v->busy()) return false;
    return true;
  });
  QApplication::processEvents();
  return page->grab().toImage();
}

bool selectSyncObject(tmui::SessionView *page, const QString &object) {
  const tmon::SessionModel &m = *page->model();
  for (int i = 0; i < m.syncObjectCount(); ++i) {
    const tmon::SyncObjectInfo &o = m.syncObject(i);
    // By id, symbol, or the start of its name ("table->lock", "made in make_table").
    if (QString::number(o.id) == object || o.symbol.startsWith(object) ||
        (!object.isEmpty() && o.name().startsWith(object))) {
      page->syncView()->refreshNow();
      page->syncView()->selectObject(o.id);
      return true;
    }
  }
  return false;
}

QString screenshotCapture(const QString &capture, const QString &viewName, double atSeconds,
                          QSize size, const QString &out, const QString &object) {
  tmui::ViewKind kind;
  const bool whole = viewName == QLatin1String("window");
  if (!whole && !tmui::parseViewKind(viewName, &kind))
    return QStringLiteral("unknown view '%1'").arg(viewName);
  QString error;
  tmui::SessionView *page = openCapture(capture, &error, atSeconds);
  if (!page) return error;
  // A long capture's overview being built from its detail is waited for:
  // the image shows what the user sees once it is done.
  if (auto *strip = dynamic_cast<tmui::WholeRunStrip *>(
          page->findChild<QWidget *>(QStringLiteral("wholeRun"))))
    waitUntil([strip] { return !strip->building(); });
  if (atSeconds >= 0 && page->replay()) page->replay()->seek(atSeconds);
  if (!object.isEmpty() && !selectSyncObject(page, object)) {
    delete page;
    return QStringLiteral("no sync object '%1' in %2").arg(object, capture);
  }
  if (whole) {
    const QImage image = renderPage(page, atSeconds, size);
    delete page;
    return savePng(image, out);
  }
  const QImage image = renderView(page, kind, atSeconds, size);
  // The reparented view no longer belongs to the page; free both.
  delete page->view(kind);
  delete page;
  return savePng(image, out);
}
