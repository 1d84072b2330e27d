#include "app/private_file.h"

#include <unistd.h>

#include <filesystem>

namespace gpumeter::app {

Expected<std::unique_ptr<PrivateFile>> PrivateFile::Write(const std::string& content) {
  std::string path = (std::filesystem::temp_directory_path() / "gpumeter-ca-XXXXXX").string();
  const int fd = ::mkstemp(path.data());  // mode 0600
  if (fd < 0)
    return MakeError(ErrorCode::kUnavailable,
                     path + ": cannot create a private file for the CA data");
  std::unique_ptr<PrivateFile> f(new PrivateFile(path));
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool closed = ::close(fd) == 0;
  if (done != content.size() || !closed)
    return MakeError(ErrorCode::kUnavailable, path + ": cannot write the CA data");
  return f;
}

PrivateFile::~PrivateFile() { ::unlink(path_.c_str()); }

}  // namespace gpumeter::app
