#include "app/usage/output.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>

namespace gpumeter::app {

int EmitText(const Expected<std::string>& text, const std::string& output) {
  if (!text) {
    spdlog::error("{}", text.error().message);
    return text.error().code == ErrorCode::kInvalidInput ? 2 : 1;
  }
  if (output.empty()) {
    fmt::print("{}", *text);
    return 0;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << *text;
  out.close();
  if (!out) {
    spdlog::error("--output {}: cannot write", output);
    return 1;
  }
  return 0;
}

}  // namespace gpumeter::app
