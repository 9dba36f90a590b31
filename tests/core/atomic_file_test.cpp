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
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("--report: cannot write '/nonexistent-dir/out.json'"), std::string::npos)
        << e.what();
  }
}

// A device is written in place: renaming a temporary over /dev/full would replace the device
// with a regular file (and report success).
TEST(AtomicFile, ADeviceIsWrittenInPlaceAndAFullOneFails) {
  try {
    writeFileAtomically("/dev/full", "x", "--emit");
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("--emit: cannot write '/dev/full': write failed: No space left on device"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  writeFileAtomically("/dev/null", "x", "--emit");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(AtomicFile, ADirectoryIsRefused) {
  EXPECT_THROW(writeFileAtomically(fs::temp_directory_path().string(), "x", "--out"), OutputError);
}

}  // namespace
}  // namespace paraxis
