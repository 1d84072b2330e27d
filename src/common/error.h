// One error model for the whole project: Expected<T> = tl::expected<T, Error>.
// No exceptions cross module or thread boundaries; third-party exceptions are converted at the
// edge.
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <utility>

namespace gpumeter {

enum class ErrorCode {
  kInvalidInput,  // malformed user input (scenario, flag, file)
  kNotFound,      // a file, library or symbol is missing
  kUnavailable,   // a source is down (driver not loaded, GPU lost, socket gone)
  kNotSupported,  // the device or driver cannot provide this
  kDeadlineExceeded,
  kInternal,
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;  // says what failed and on which input, for a human
};

template <typename T>
using Expected = tl::expected<T, Error>;

inline tl::unexpected<Error> MakeError(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

}  // namespace gpumeter
