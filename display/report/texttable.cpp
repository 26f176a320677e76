#include "texttable.h"

#include <algorithm>

void TextTable::addColumn(const QString &header, Align align, int maxWidth) {
  columns_.push_back(Column{header, align, maxWidth});
}

void TextTable::addRow(QStringList cells) {
  for (size_t c = 0; c < columns_.size() && c < size_t(cells.size()); c++) {
    int max = columns_[c].maxWidth;
    if (max > 1 && cells[int(c)].size() > max) cells[int(c)] = cells[int(c)].left(max - 1) + u'…';
  }
  rows_.push_back(std::move(cells));
}

QStringList TextTable::lines(const QString &indent) const {
  std::vector<int> width(columns_.size(), 0);
  for (size_t c = 0; c < columns_.size(); c++) {
    width[c] = int(columns_[c].header.size());
    for (const QStringList &r : rows_)
      if (int(c) < r.size()) width[c] = std::max(width[c], int(r[int(c)].size()));
  }
  auto line = [&](auto cell) {
    QString s = indent;
    for (size_t c = 0; c < columns_.size(); c++) {
      const QString text = cell(c);
      const bool last = c + 1 == columns_.size();
      if (c) s += QStringLiteral("  ");
      if (columns_[c].align == Right) s += text.rightJustified(width[c]);
      else s += last ? text : text.leftJustified(width[c]);
    }
    // A free-text last column may be empty: no trailing blanks.
    while (s.endsWith(u' ')) s.chop(1);
    return s;
  };
  QStringList out;
  out << line([&](size_t c) { return columns_[c].header; });
  for (const QStringList &r : rows_)
    out << line([&](size_t c) { return int(c) < r.size() ? r[int(c)] : QString(); });
  return out;
}
