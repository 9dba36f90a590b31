#include "core/atomic_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace paraxis {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, WritesTheWholeTextAndLeavesNoTemporary) {
  const fs::path dir = fs::temp_directory_path() / "paraxis-atomic-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  writeFileAtomically(path, "first\n", "--report");
  writeFileAtomically(path, "second\n", "--report");  // replaces
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "second\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, AFailureNamesTheOptionAndPathAndLeavesNothing) {
  try {
    writeFileAtomically("/nonexistent-dir/out.json", "x", "--report");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--report: cannot write '/nonexistent-dir/out.json'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace paraxis
