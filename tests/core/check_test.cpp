#include "core/check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace paraxis {
namespace {

TEST(Check, FailureNamesBothOperandsAndTheLocation) {
  try {
    checkEq(3, 4, "ranks agree");
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("ranks agree"), std::string::npos);
    EXPECT_NE(message.find("left = 3, right = 4"), std::string::npos);
    EXPECT_NE(message.find("check_test.cpp"), std::string::npos);
  }
}

TEST(Check, PassingChecksDoNothing) {
  EXPECT_NO_THROW(check(true, "true"));
  EXPECT_NO_THROW(checkLe(1, 2, "ordered"));
}

}  // namespace
}  // namespace paraxis
