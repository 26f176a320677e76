// Reads a capture on a thread of its own, so that opening a long one, or
// seeking in it, never freezes the window (reading a 10 s window of 100
// busy threads takes about 0.4 s of CPU, a 60 MB capture several seconds).
// finished() comes on the GUI thread with the page, or nullptr and the one
// line saying why nothing could be read.
#ifndef THREADMON_APP_CAPTURELOADER_H
#define THREADMON_APP_CAPTURELOADER_H

#include <QObject>
#include <QPointer>
#include <QString>
#include <any>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "captureopen.h"
#include "modelview.h"
#include "views.h"

class QThread;
namespace tmon {
class SessionModel;
}

class CaptureLoader : public QObject {
  Q_OBJECT
 public:
  // A view's result to compute ahead on the read's threads, once the
  // window is read and settled (a seek's page shows with its data at once:
  // no second hop through the views' workers), and about what it costs.
  struct Ahead {
    tmon::ViewKind kind;
    tmui::ModelView::Ahead compute;
    double costMs = 0;
  };
  using Computed = std::vector<std::pair<tmon::ViewKind, std::any>>;
  // kept: the capture's index as an earlier read of it left it (index()).
  CaptureLoader(const QString &path, double atSeconds, QObject *parent = nullptr,
                std::vector<Ahead> aheads = {}, std::shared_ptr<KeptIndex> kept = nullptr);
  // Waits for the read: the thread must not outlive the model it fills.
  ~CaptureLoader() override;

  QString path() const { return path_; }
  bool running() const;
  // No finished() any more; the read of a long capture stops early (so a
  // newer seek does not share the cores with it) and the loader deletes
  // itself once it has.
  void abandon();
  // The new page's widgets are made once gone (the page this read replaces,
  // deleted later) is: until then it holds its model, and the read would
  // fill the new one beside it (the peak of a seek in the hour rose by
  // 15-18 MiB when the widgets came first).
  void makeWidgetsAfter(QObject *gone);
  // What the aheads gave, for the page finished() gave (SessionView::takeAhead).
  Computed takeComputed() { return std::move(computed_); }
  // A long capture's index as the read left it, for the next read (when finished).
  std::shared_ptr<KeptIndex> index() const { return read_.index; }

 signals:
  // page: owned by the receiver. Emitted once, then the loader deletes itself.
  void finished(tmui::SessionView *page, const QString &error);

 private:
  void onThreadFinished();
  // The page for what was read (once): as soon as the read is settled when
  // views are computed ahead, else when the thread ends.
  void makePage();
  // The page's widgets, made on the GUI thread while the read runs (a core
  // of two is mostly idle then: the read-ahead waits for the thread that
  // applies); their model is read once it is filled (makePage).
  void makeWidgets();
  void computeAhead(const tmon::SessionModel &model, const tmon::TimeRange &window);

  QString path_;
  // The overview open for this capture (a seek's), alive until the page
  // takes it over, so that the read skips its summary.
  std::shared_ptr<OverviewBuild> overview_;
  tmon::CaptureIdentity known_;
  std::unique_ptr<tmon::SessionModel> model_;   // until a page takes it
  tmon::SessionModel *const filling_;           // the model, whoever holds it
  std::unique_ptr<tmui::SessionView> widgets_;  // made, its model not read yet
  std::unique_ptr<tmui::SessionView> page_;  // made, until finished() gives it
  QString error_;
  QPointer<QObject> after_;  // makeWidgetsAfter's
  bool held_ = false;  // the model held for reading while the page is made beside
  std::shared_ptr<KeptIndex> kept_;
  CaptureRead read_;
  std::vector<Ahead> aheads_;
  Computed computed_;
  QThread *thread_ = nullptr;
  bool abandoned_ = false;
  std::atomic<bool> stop_{false};  // abandoned: the read ends at its next chunk
};

#endif
