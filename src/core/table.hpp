#pragma once
// A plain-text table for terminal reports: columns are sized to their widest cell, numbers
// are right-aligned, and an optional rule separates a totals row.
#include <iosfwd>
#include <string>
#include <vector>

namespace paraxis {

class Table {
 public:
  enum class Align { kLeft, kRight };

  void addColumn(std::string header, Align align = Align::kLeft);
  void addRow(std::vector<std::string> cells);
  void addRule();  // a line across the table before the next row

  void print(std::ostream& out) const;

 private:
  struct Column {
    std::string header;
    Align align;
  };
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

}  // namespace paraxis
