#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace paraxis {
namespace {

[[noreturn]] void fail(const std::string& option, const std::string& path, const char* step, int error,
                       const std::string& temporary) {
  if (!temporary.empty()) ::unlink(temporary.c_str());
  throw ConfigError(fmt::format("{}: cannot write '{}': {} failed: {}", option, path, step, std::strerror(error)));
}

}  // namespace

void writeFileAtomically(const std::string& path, std::string_view text, const std::string& option) {
  std::string temporary = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) fail(option, path, "creating a temporary file", errno, "");
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      fail(option, path, "write", error, temporary);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) {  // EINVAL: a file system without fsync (a pipe, /dev)
    const int error = errno;
    ::close(fd);
    fail(option, path, "fsync", error, temporary);
  }
  if (::close(fd) != 0) fail(option, path, "close", errno, temporary);
  ::chmod(temporary.c_str(), 0644);  // mkstemp's 0600 is stricter than any other output of ours
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail(option, path, "rename", errno, temporary);
}

}  // namespace paraxis
