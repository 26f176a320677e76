#include "seekstill.h"

#include <QPainter>

SeekStill::SeekStill(const QPixmap &page, const QString &title, QWidget *parent)
    : QWidget(parent), page_(page), title_(title) {
  setObjectName(QStringLiteral("seekStill"));
}

void SeekStill::setText(const QString &text) {
  text_ = text;
  update();
}

void SeekStill::paintEvent(QPaintEvent *) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  p.setOpacity(0.35);
  p.drawPixmap(0, 0, page_);
  p.setOpacity(1);
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * 1.3);
  p.setFont(f);
  p.setPen(palette().windowText().color());
  p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, text_);
}
