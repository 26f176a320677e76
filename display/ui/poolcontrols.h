// The filter box and the sort of a pooled view (Threads, LWPs, timeline):
// what they ask for goes to the model's pool layout (pools.h).
#ifndef THREADMON_UI_POOLCONTROLS_H
#define THREADMON_UI_POOLCONTROLS_H

#include <QStringList>
#include <QWidget>

class QComboBox;
class QLineEdit;

namespace tmui {

class PoolControls : public QWidget {
  Q_OBJECT
 public:
  // One "Sort: most ..." entry per category label, after "first started".
  PoolControls(const QStringList &categoryLabels, QWidget *parent = nullptr);
  QString filter() const;
  int sortCategory() const;  // -1: creation order
  void setFilter(const QString &text);
  void setSortCategory(int category);

 signals:
  void filterChanged();
  void sortChanged();

 private:
  QLineEdit *filter_;
  QComboBox *sort_;
};

}  // namespace tmui

#endif
