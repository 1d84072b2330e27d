#include "app/usage/output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpumeter::app {
namespace {

// Writes `text` to `path`, readable by its owner only (0600), as the store is: a report names
// every pod and what it cost. A file that exists is truncated and, when it is a regular file
// with wider permissions, narrowed (a FIFO or a device keeps its own). Errors name the file.
Expected<void> WritePrivate(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return MakeError(ErrorCode::kUnavailable, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) != 0 &&
      ::fchmod(fd, st.st_mode & 0700) != 0) {
    const int err = errno;
    ::close(fd);
    return MakeError(ErrorCode::kUnavailable,
                     std::string("cannot make it private (mode 0600): ") + std::strerror(err));
  }
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return MakeError(ErrorCode::kUnavailable, std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return MakeError(ErrorCode::kUnavailable, std::strerror(errno));
  return {};
}

}  // namespace

int EmitText(const Expected<std::string>& text, const std::string& output) {
  if (!text) {
    spdlog::error("{}", text.error().message);
    return text.error().code == ErrorCode::kInvalidInput ? 2 : 1;
  }
  if (output.empty()) {
    fmt::print("{}", *text);
    return 0;
  }
  if (auto w = WritePrivate(output, *text); !w) {
    spdlog::error("--output {}: cannot write: {}", output, w.error().message);
    return 1;
  }
  return 0;
}

}  // namespace gpumeter::app
