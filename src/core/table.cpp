#include "core/table.hpp"

#include <algorithm>
#include <ostream>

#include "core/check.hpp"

namespace paraxis {
namespace {

// Display width in code points, so that "µs" or "³" do not skew the columns.
std::size_t displayWidth(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

void Table::addColumn(std::string header, Align align) {
  columns_.push_back({std::move(header), align});
}

void Table::addRow(std::vector<std::string> cells) {
  checkEq(cells.size(), columns_.size(), "table row width");
  rows_.push_back(std::move(cells));
}

void Table::addRule() { rows_.emplace_back(); }

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const Column& column : columns_) widths.push_back(displayWidth(column.header));
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], displayWidth(row[i]));
  }
  auto printRow = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string pad(widths[i] - displayWidth(cells[i]), ' ');
      if (i > 0) line += "  ";
      line += columns_[i].align == Align::kRight ? pad + cells[i] : cells[i] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  std::vector<std::string> headers;
  for (const Column& column : columns_) headers.push_back(column.header);
  printRow(headers);
  std::size_t total = 0;
  for (std::size_t w : widths) total += w + 2;
  const std::string rule(total > 2 ? total - 2 : 0, '-');
  out << rule << '\n';
  for (const auto& row : rows_) {
    if (row.empty()) {
      out << rule << '\n';
    } else {
      printRow(row);
    }
  }
}

}  // namespace paraxis
