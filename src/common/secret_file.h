// A secret from a file (a mounted Kubernetes Secret: a bearer token, a password): read through
// ReadBoundedFile (a regular file of at most 64 KiB; a FIFO or device in its place is refused, not
// waited on), surrounding whitespace removed (`echo token > file` and `kubectl create secret
// --from-file` leave a newline), then refused when empty or when it holds more than one line.
// The server and its clients read their token with this one function, so they agree on it.
// Errors (kInvalidInput) start with `flag` and the path and never contain the secret.
// Thread-safe; no state.
#pragma once

#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <string>

#include "common/bounded_file.h"
#include "common/error.h"

namespace gpumeter {

inline constexpr size_t kMaxSecretFileBytes = 64u << 10;

inline Expected<std::string> ReadSecretFile(const std::string& flag, const std::string& path) {
  const std::string where = flag + " " + path;
  auto text = ReadBoundedFile(path, kMaxSecretFileBytes);
  if (!text) {
    std::string why = text.error().message;
    if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
    if (text.error().code == ErrorCode::kInvalidInput)
      return MakeError(ErrorCode::kInvalidInput, where + ": " + why);
    return MakeError(ErrorCode::kInvalidInput, where + ": cannot read (" + why + ")");
  }
  std::string s = std::move(*text);
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.back())) s.pop_back();
  size_t start = 0;
  while (start < s.size() && space(s[start])) ++start;
  s.erase(0, start);
  if (s.empty()) return MakeError(ErrorCode::kInvalidInput, where + ": empty");
  for (const char c : s)
    if (c == '\r' || c == '\n' || c == '\0')
      return MakeError(ErrorCode::kInvalidInput,
                       where + ": more than one line (one secret per file)");
  return s;
}

// A warning when the secret's file can be read by its group or by others (the token guards
// every pod's usage): "FLAG PATH: mode 0644, readable by group or others; make it 0600 or 0400".
// Empty when the mode is private or the file cannot be examined (the read reports that).
// The caller logs it once, at start.
inline std::string SecretFileWarning(const std::string& flag, const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || (st.st_mode & 077) == 0) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return flag + " " + path + ": mode " + mode +
         ", readable by group or others; make it 0600 or 0400 (a Kubernetes Secret volume: "
         "defaultMode: 0400)";
}

}  // namespace gpumeter
