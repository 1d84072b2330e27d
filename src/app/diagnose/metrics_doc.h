// `gpumeter metrics-doc`: the metric catalogue as the Markdown table in docs/metrics.md.
#pragma once

namespace gpumeter::app {

// Prints the table on stdout; returns the exit code (0).
int RunMetricsDoc();

}  // namespace gpumeter::app
