#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "core/error.hpp"

namespace paraxis {
namespace {

[[noreturn]] void fail(const std::string& option, const std::string& path, const char* step, int error,
                       const std::string& temporary) {
  if (!temporary.empty()) ::unlink(temporary.c_str());
  throw OutputError(fmt::format("{}: cannot write '{}': {} failed: {}", option, path, step, std::strerror(error)));
}

// Every byte to `fd`, or the errno of the write that failed (0: all written).
int writeAll(int fd, std::string_view bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

void writeInPlace(const std::string& path, std::string_view bytes, const std::string& option) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail(option, path, "open", errno, "");
  if (const int error = writeAll(fd, bytes); error != 0) {
    ::close(fd);
    fail(option, path, "write", error, "");
  }
  if (::close(fd) != 0) fail(option, path, "close", errno, "");
}

}  // namespace

void writeFileAtomically(const std::string& path, std::string_view bytes, const std::string& option) {
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) {
    if (S_ISDIR(existing.st_mode)) fail(option, path, "open", EISDIR, "");
    if (!S_ISREG(existing.st_mode)) {
      writeInPlace(path, bytes, option);
      return;
    }
  }
  std::string temporary = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) fail(option, path, "creating a temporary file", errno, "");
  if (const int error = writeAll(fd, bytes); error != 0) {
    ::close(fd);
    fail(option, path, "write", error, temporary);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) {  // EINVAL: a file system without fsync
    const int error = errno;
    ::close(fd);
    fail(option, path, "fsync", error, temporary);
  }
  if (::close(fd) != 0) fail(option, path, "close", errno, temporary);
  ::chmod(temporary.c_str(), 0644);  // mkstemp's 0600 is stricter than any other output of ours
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail(option, path, "rename", errno, temporary);
}

void finishStandardOutput() {
  errno = 0;  // the failed write's errno may be gone by now: then the line says "write error"
  std::cout.flush();
  const bool streamFailed = std::cout.bad();
  const bool fileFailed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!streamFailed && !fileFailed) return;
  const int error = errno;
  throw OutputError(fmt::format("standard output: cannot write: {}", error != 0 ? std::strerror(error) : "write error"));
}

}  // namespace paraxis
