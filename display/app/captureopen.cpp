#include "captureopen.h"

#include <QFileInfo>

#include "capturereader.h"
#include "sessionmodel.h"
#include "sessionview.h"

tmui::SessionView *openCapture(const QString &path, QString *error) {
  auto *model = new tmon::SessionModel;
  const tmon::CaptureLoadResult r = tmon::CaptureReader::load(path, model);
  if (r.status == tmon::CaptureLoadResult::Unreadable) {
    *error = QStringLiteral("%1: %2").arg(path, r.message);
    delete model;
    return nullptr;
  }
  model->settleNow();  // part of opening it, not of the first paint
  auto *page = new tmui::SessionView(model, tmui::SessionView::Source::Replay);
  page->setWindowFilePath(QFileInfo(path).absoluteFilePath());
  if (r.status == tmon::CaptureLoadResult::Damaged)
    page->setNotice(QObject::tr("This capture is damaged: %1. Showing the %2 whole frames "
                                "before byte %3.")
                        .arg(r.message)
                        .arg(r.frames)
                        .arg(r.goodBytes));
  return page;
}
