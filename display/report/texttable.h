// A text table whose columns are as wide as their widest cell, two spaces
// apart: a figure of any size never runs into its neighbour (fixed widths
// printed "381.5515187036.328" for a 381.55 s wait beside a 187036 ms max).
#ifndef THREADMON_TEXTTABLE_H
#define THREADMON_TEXTTABLE_H

#include <QString>
#include <QStringList>

#include <vector>

class TextTable {
 public:
  enum Align { Left, Right };
  // maxWidth cuts longer cells of a Left column (with "…"); 0 = no limit.
  // The last column is free text: never padded.
  void addColumn(const QString &header, Align align, int maxWidth = 0);
  void addRow(QStringList cells);
  // The header line, then one line per row, each starting with indent.
  QStringList lines(const QString &indent = QString()) const;

 private:
  struct Column {
    QString header;
    Align align;
    int maxWidth;
  };
  std::vector<Column> columns_;
  std::vector<QStringList> rows_;
};

#endif
