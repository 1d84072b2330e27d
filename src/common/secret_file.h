// A secret from a file (a mounted Kubernetes Secret: a bearer token, a password): read through
// ReadBoundedFile (a regular file of at most 64 KiB; a FIFO or device in its place is refused, not
// waited on), surrounding whitespace removed (`echo token > file` and `kubectl create secret
// --from-file` leave a newline), then refused when empty or when it holds more than one line.
// The server and its clients read their token with this one function, so they agree on it.
// Errors (kInvalidInput) start with `flag` and the path and never contain the secret.
// Thread-safe; no state.
#pragma once

#include <cctype>
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

}  // namespace gpumeter
