// Findings: what to look at first in the window, most severe first. Each
// row has a severity mark, the plain message, the evidence in a smaller
// line, and a Show button that asks the session page to switch to the view
// that shows it and select its object or time span.
#ifndef THREADMON_UI_FINDINGSVIEW_H
#define THREADMON_UI_FINDINGSVIEW_H

#include <QStringList>
#include <vector>

#include "findings.h"
#include "modelview.h"

class QLabel;
class QScrollArea;
class QVBoxLayout;

namespace tmui {

class FindingsView : public ModelView {
  Q_OBJECT
 public:
  FindingsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override { return int(findings_.size()); }
  const std::vector<tmon::Finding> &findings() const { return findings_; }
  // Same as pressing row's Show button.
  void activate(int row);
  // The evidence object as one short line ("key value, ...").
  static QString evidenceLine(const QJsonObject &evidence);
  Ahead ahead() const override;

 signals:
  void showRequested(const tmon::Finding &finding);

 protected:
  void rebuild() override;

 private:
  QWidget *makeRow(int index, const tmon::Finding &f);
  void showFindings(std::vector<tmon::Finding> found, const QString &described);
  std::vector<tmon::Finding> findings_;
  QStringList shown_;  // kind + message of each row, to skip identical rebuilds
  // Each row's kind and severity: while they stay, live updates only set
  // the rows' texts (making the rows anew laid out every label again).
  QStringList shownKinds_;
  struct RowLabels {
    QLabel *message, *evidence;
  };
  std::vector<RowLabels> rowLabels_;
  QString evidenceText(const tmon::Finding &f) const;
  QLabel *title_;
  QLabel *empty_;
  QScrollArea *scroll_;
  QWidget *list_;
  QVBoxLayout *rows_;
};

}  // namespace tmui

#endif
