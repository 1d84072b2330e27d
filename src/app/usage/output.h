// Where a command's text goes: stdout, or the file --output names. Thread-safe (no shared state).
#pragma once

#include <string>

#include "common/error.h"

namespace gpumeter::app {

// A command's result: the text to stdout, or to `output` when given (mode 0600, like the store:
// an existing file is truncated and narrowed to it); an error logged. The exit code: 0, 1 (a
// source failed or the file could not be written) or 2 (bad input).
int EmitText(const Expected<std::string>& text, const std::string& output);

}  // namespace gpumeter::app
