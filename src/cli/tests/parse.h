// The cli tests' one way to run a command line through a CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpumeter::cli::testing {

// Parses `args` after the program name; the error's text, or "" when it parsed.
inline std::string Parse(CLI::App& app, std::vector<std::string> args) {
  args.insert(args.begin(), "gpumeter");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    return "";
  } catch (const CLI::ParseError& e) {
    return std::string(e.what());
  }
}

}  // namespace gpumeter::cli::testing
