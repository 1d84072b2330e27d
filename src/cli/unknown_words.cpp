#include "cli/unknown_words.h"

#include <algorithm>

namespace gpumeter::cli {

size_t EditDistance(const std::string& a, const std::string& b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions ("reprot" -> "report": 1).
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::optional<std::string> Closest(const std::string& word,
                                   const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    // A prefix of a flag ("--no-process" for "--no-process-series") is as good as one edit.
    const size_t d =
        c.size() > word.size() && c.compare(0, word.size(), word) == 0 && word.size() >= 4
            ? 1
            : EditDistance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

namespace {

std::vector<std::string> SubcommandNames(const CLI::App& root) {
  std::vector<std::string> out;
  for (const CLI::App* sub : root.get_subcommands([](const CLI::App*) { return true; }))
    out.push_back(sub->get_name());
  return out;
}

// The long flags of `app` and of the root (--help, --version), each with its dashes.
std::vector<std::string> LongFlags(const CLI::App& app, const CLI::App& root) {
  std::vector<std::string> out;
  for (const CLI::App* a : {&app, &root})
    for (const CLI::Option* o : a->get_options())
      for (const auto& n : o->get_lnames()) out.push_back("--" + n);
  return out;
}

std::string Suggest(const std::optional<std::string>& s) {
  return s ? "; did you mean " + *s + "?" : "";
}

}  // namespace

std::optional<std::string> UnknownWord(const CLI::App& root, const std::vector<std::string>& args) {
  const auto names = SubcommandNames(root);
  const CLI::App* sub = nullptr;
  for (const auto& arg : args) {
    if (arg == "--") return std::nullopt;
    if (!sub) {
      if (arg.starts_with("--")) {  // before a command: only the root's own (--help, --version)
        const std::string flag = arg.substr(0, arg.find('='));
        const auto flags = LongFlags(root, root);
        if (std::find(flags.begin(), flags.end(), flag) == flags.end())
          return "unknown flag " + flag + " before a command" + Suggest(Closest(flag, flags)) +
                 " (gpumeter --help lists the commands; each command's --help its flags)";
      }
      if (arg.starts_with("-")) continue;
      if (std::find(names.begin(), names.end(), arg) == names.end()) {
        std::string all;
        for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
        return "unknown command '" + arg + "'" + Suggest(Closest(arg, names)) +
               " (commands: " + all + ")";
      }
      sub = root.get_subcommand(arg);
      continue;
    }
    if (!arg.starts_with("--") || arg.size() == 2) continue;
    const std::string flag = arg.substr(0, arg.find('='));
    const auto flags = LongFlags(*sub, root);
    if (std::find(flags.begin(), flags.end(), flag) == flags.end())
      return sub->get_name() + ": unknown flag " + flag + Suggest(Closest(flag, flags)) +
             " (gpumeter " + sub->get_name() + " --help lists them)";
  }
  return std::nullopt;
}

}  // namespace gpumeter::cli
