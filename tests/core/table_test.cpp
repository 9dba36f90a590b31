#include "core/table.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"

namespace paraxis {
namespace {

TEST(Table, AlignsColumnsAndDrawsRules) {
  Table table;
  table.addColumn("name");
  table.addColumn("value", Table::Align::kRight);
  table.addRow({"a", "1"});
  table.addRow({"longer", "12345"});
  table.addRule();
  table.addRow({"total", "12346"});
  std::ostringstream out;
  table.print(out);
  EXPECT_EQ(out.str(),
            "name    value\n"
            "-------------\n"
            "a           1\n"
            "longer  12345\n"
            "-------------\n"
            "total   12346\n");
}

TEST(Table, RowOfTheWrongWidthIsABug) {
  Table table;
  table.addColumn("only");
  EXPECT_THROW(table.addRow({"a", "b"}), InternalError);
}

}  // namespace
}  // namespace paraxis
