// Unknown command words, named before CLI11 parses: CLI11 reports a misspelt flag only after the
// required ones ("report --sourc X" says "--source is required") and a misspelt subcommand as "A
// subcommand is required". This check names the word and suggests the closest known one. Pure.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpumeter::cli {

// Edit distance (insertions, deletions, substitutions; a swap of two neighbours counts 1).
size_t EditDistance(const std::string& a, const std::string& b);

// The candidate closest to `word` when it is close enough to be a typo (at most 2 edits, or a
// third of the word), else nullopt.
std::optional<std::string> Closest(const std::string& word,
                                   const std::vector<std::string>& candidates);

// `args` (after the program name) against `root`'s subcommands and the chosen subcommand's long
// flags: the error message for the first unknown subcommand or `--flag`, or nullopt when every
// word is known. Words after a bare `--`, and values (words not starting with `--`), are not
// judged; CLI11 still parses everything.
std::optional<std::string> UnknownWord(const CLI::App& root, const std::vector<std::string>& args);

}  // namespace gpumeter::cli
