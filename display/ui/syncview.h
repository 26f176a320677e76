// Sync objects: every object found, grouped by module or by the program's
// call site that contended for it, with acquisitions,
// contentions, wait and hold time over the window (the ThreadMon paper's
// figure 4); sortable and filterable. Selecting an object asks the
// timeline to outline where threads were blocked on it, and shows its call
// sites and who blocked whom in the details pane beside the list.
#ifndef THREADMON_UI_SYNCVIEW_H
#define THREADMON_UI_SYNCVIEW_H

#include "modelview.h"
#include "synctree.h"

class QComboBox;
class QLineEdit;
class QSplitter;
class QTreeView;

namespace tmui {

class SyncDetails;

class SyncView : public ModelView {
  Q_OBJECT
 public:
  SyncView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;  // objects shown after filtering
  void setFilterText(const QString &text);
  // Objects under their module, or under their call site.
  void setGrouping(SyncTree::Grouping grouping);
  // Selects the object with this id (0 clears).
  void selectObject(uint32_t id);
  uint32_t selectedObject() const { return selected_; }
  // The pane with the selected object's call sites and waiter x holder matrix.
  SyncDetails *details() const { return details_; }

 signals:
  void objectSelected(uint32_t id);  // 0 when a module row or nothing

 protected:
  void rebuild() override;
  void resizeEvent(QResizeEvent *event) override;

 private:
  // The table and the details side by side for this width, until the user
  // drags the splitter.
  void shareWidth();

  SyncTree *tree_;
  QTreeView *view_;
  QLineEdit *filter_;
  QComboBox *group_;
  SyncDetails *details_;
  QSplitter *split_;
  int figuresWidth_ = 0;  // the table's columns through Acquisitions
  int detailsWidth_ = 0;  // what the details pane wants, and at least
  int detailsLeast_ = 0;
  bool splitDragged_ = false;
  uint32_t selected_ = 0;
};

}  // namespace tmui

#endif
