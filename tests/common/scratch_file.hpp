#pragma once
// A file of given text in the test's scratch folder, removed at the end of its scope.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace paraxis::testing_support {

class ScratchFile {
 public:
  // `name`: what it holds ("trace", "calls"), for a reader of the folder.
  ScratchFile(const std::string& text, const std::string& name)
      : path_(::testing::TempDir() + name + "." + std::to_string(getpid()) + ".json") {
    std::ofstream(path_) << text;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace paraxis::testing_support
