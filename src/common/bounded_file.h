// Reading a file that someone else controls (/proc/<pid>/*, a pods file, a kubeconfig, a token):
// only a regular file is read, it is opened O_NONBLOCK (a FIFO or a device put in its place cannot
// block the caller or feed it forever) and at most `max_bytes` are read; more is an error. Files
// under /proc report size 0, so the cap is enforced while reading, not from fstat. Errors name the
// path: kNotFound when it does not exist (a process that exited), kInvalidInput when it is not a
// regular file or too large, kUnavailable for other read errors. ReadBoundedFileChunks hands the
// file over as it is read, so that a reader that keeps only part of it (a dcgm-exporter page)
// holds no more than that. Thread-safe; no state.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter {

// As ReadBoundedFile, `on_chunk` getting each piece read (within the cap) instead of a string.
inline Expected<void> ReadBoundedFileChunks(const std::string& path, size_t max_bytes,
                                            const std::function<void(std::string_view)>& on_chunk) {
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  } f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0)
    return MakeError(
        errno == ENOENT || errno == ESRCH ? ErrorCode::kNotFound : ErrorCode::kUnavailable,
        path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    return MakeError(ErrorCode::kUnavailable, path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return MakeError(ErrorCode::kInvalidInput, path + ": not a regular file (refused)");
  size_t total = 0;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n == 0) return {};
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError(errno == ESRCH ? ErrorCode::kNotFound : ErrorCode::kUnavailable,
                       path + ": " + std::strerror(errno));
    }
    if (total + static_cast<size_t>(n) > max_bytes)
      return MakeError(ErrorCode::kInvalidInput,
                       path + ": larger than " + std::to_string(max_bytes) + " bytes (refused)");
    total += static_cast<size_t>(n);
    on_chunk(std::string_view(buf, static_cast<size_t>(n)));
  }
}

inline Expected<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes) {
  std::string out;
  auto read =
      ReadBoundedFileChunks(path, max_bytes, [&out](std::string_view chunk) { out += chunk; });
  if (!read) return tl::unexpected(read.error());
  return out;
}

}  // namespace gpumeter
