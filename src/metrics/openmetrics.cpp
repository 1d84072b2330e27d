#include "metrics/openmetrics.h"

#include <fmt/format.h>

#include <cmath>

#include "metrics/catalogue.h"

namespace gpumeter::metrics {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);  // shortest round-trip form; fmt ignores the locale by default
}

const MetricDef* DefByName(const std::string& name) {
  for (const auto& d : Catalogue())
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace

bool WantsOpenMetrics(const std::string& accept) { return accept.find("application/openmetrics-text") != std::string::npos; }

std::string RenderOpenMetrics(const std::vector<prometheus::MetricFamily>& families) {
  std::string out;
  for (const auto& f : families) {
    const auto* def = DefByName(f.name);
    const bool counter = f.type == prometheus::MetricType::Counter;
    const bool info = !counter && f.name.ends_with("_info");
    std::string base = f.name, suffix;
    if (counter && base.ends_with("_total")) base.resize(base.size() - 6), suffix = "_total";
    if (info) base.resize(base.size() - 5), suffix = "_info";
    out += fmt::format("# TYPE {} {}\n", base, counter ? "counter" : info ? "info" : "gauge");
    if (def && !def->unit.empty() && base.ends_with("_" + def->unit)) out += fmt::format("# UNIT {} {}\n", base, def->unit);
    out += fmt::format("# HELP {} {}\n", base, Escape(f.help));
    for (const auto& m : f.metric) {
      out += base + suffix;
      if (!m.label.empty()) {
        out += '{';
        for (size_t i = 0; i < m.label.size(); ++i)
          out += fmt::format("{}{}=\"{}\"", i ? "," : "", m.label[i].name, Escape(m.label[i].value));
        out += '}';
      }
      out += ' ' + Number(counter ? m.counter.value : m.gauge.value) + '\n';
    }
  }
  out += "# EOF\n";
  return out;
}

}  // namespace gpumeter::metrics
