#include "seekstill.h"

#include <QBackingStore>
#include <QImage>
#include <QPainter>

SeekStill::SeekStill(const QPixmap &page, const QString &title, QWidget *parent)
    : QWidget(parent), page_(page), title_(title) {
  setObjectName(QStringLiteral("seekStill"));
}

QPixmap SeekStill::pictureOf(QWidget *page) {
  QBackingStore *store = page->isVisible() ? page->window()->backingStore() : nullptr;
  const auto *shown = store ? dynamic_cast<const QImage *>(store->paintDevice()) : nullptr;
  if (shown && !shown->isNull()) {
    const qreal ratio = shown->devicePixelRatio();
    const QRect at(page->mapTo(page->window(), QPoint(0, 0)) * ratio, page->size() * ratio);
    if (shown->rect().contains(at)) {
      QPixmap picture = QPixmap::fromImage(shown->copy(at));
      picture.setDevicePixelRatio(ratio);
      return picture;
    }
  }
  return page->grab();
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
