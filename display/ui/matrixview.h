// Who blocks whom over every sync object: the waiter x holder heat table
// for the window (the whole run by default for captures).
#ifndef THREADMON_UI_MATRIXVIEW_H
#define THREADMON_UI_MATRIXVIEW_H

#include "modelview.h"

class QLabel;

namespace tmui {

class WaitMatrixTable;

class MatrixView : public ModelView {
  Q_OBJECT
 public:
  MatrixView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;  // waiting threads
  int cellCount() const;

 protected:
  void rebuild() override;

 private:
  // What the table left out, said in the title ("" when nothing).
  QString others() const;

 private:
  QLabel *title_;
  WaitMatrixTable *table_;
};

}  // namespace tmui

#endif
