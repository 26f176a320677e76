#include "statelegend.h"

#include <QPainter>

#include "modeltypes.h"
#include "statepalette.h"

namespace tmui {

StateLegend::StateLegend(QWidget *parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

int StateLegend::layout(int width, bool paint, QPainter *p) const {
  const QFontMetrics fm = fontMetrics();
  const int sw = 11, lineH = fm.height() + 4;
  int x = 6, y = 2;
  for (int s = 0; s < tmon::kFinalStateCount; ++s) {
    const QString label = stateLabel(tmon::FinalState(s));
    const int w = sw + 4 + fm.horizontalAdvance(label) + 14;
    if (x + w > width && x > 6) {
      x = 6;
      y += lineH;
    }
    if (paint) {
      p->fillRect(QRect(x, y + (fm.height() - sw) / 2, sw, sw), stateColor(tmon::FinalState(s)));
      p->setPen(palette().color(QPalette::WindowText));
      p->drawText(x + sw + 4, y + fm.ascent(), label);
    }
    x += w;
  }
  return y + lineH;
}

int StateLegend::heightForWidth(int width) const { return layout(width, false, nullptr); }

QSize StateLegend::sizeHint() const { return QSize(800, heightForWidth(800)); }

void StateLegend::paintEvent(QPaintEvent *) {
  QPainter p(this);
  layout(width(), true, &p);
}

}  // namespace tmui
