// A parser for the Prometheus text exposition format (0.0.4) as exporters write it: # HELP and
// # TYPE lines, samples `name{label="value",…} value [timestamp]`, escaped label values (\\ \" \n),
// NaN/±Inf, Windows line ends, blank lines and other comments. OpenMetrics' `# EOF` ends the
// page. Errors name the line and what is wrong. Pure, no allocation beyond the result.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace gpumeter::prom {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
  size_t line = 0;  // 1-based, for messages
};

struct PromPage {
  std::vector<PromSample> samples;
  std::map<std::string, std::string> types;  // family name → counter, gauge, …
};

Expected<PromPage> ParsePromText(std::string_view text);

}  // namespace gpumeter::prom
