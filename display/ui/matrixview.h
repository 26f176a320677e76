// Who blocks whom over every sync object: the waiter x holder heat table
// for the window (the whole run by default for captures), by thread or, when
// more threads waited than fit, by pool (pools x pools; a checkbox switches).
#ifndef THREADMON_UI_MATRIXVIEW_H
#define THREADMON_UI_MATRIXVIEW_H

#include "modelview.h"

class QCheckBox;
class QLabel;

namespace tmui {

class WaitMatrixTable;

class MatrixView : public ModelView {
  Q_OBJECT
 public:
  MatrixView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;  // waiting threads
  int cellCount() const;
  // Rows and columns are pools (and the threads in none).
  bool pooled() const { return pooled_; }
  // Pools or threads from now on, whatever the size (the checkbox).
  void setPooled(bool pooled);

 protected:
  void rebuild() override;

 private:
  // What the table left out, said in the title ("" when nothing).
  QString others() const;

 private:
  QLabel *title_;
  QCheckBox *byPool_;
  WaitMatrixTable *table_;
  bool pooled_ = false;
  bool chosen_ = false;  // the user chose; else pooled when too many threads for their own rows
};

}  // namespace tmui

#endif
