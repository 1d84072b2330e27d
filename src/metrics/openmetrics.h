// OpenMetrics 1.0 text exposition of the same families (what Prometheus asks for first): counter
// families named without `_total`, `# UNIT` lines from the catalogue, `_info` gauges as the info
// type, `# EOF` at the end. Locale-independent. Pure.
#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace gpumeter::metrics {

std::string RenderOpenMetrics(const std::vector<prometheus::MetricFamily>& families);

// True when an Accept header asks for OpenMetrics (Prometheus 2.x sends it first by default).
bool WantsOpenMetrics(const std::string& accept);

}  // namespace gpumeter::metrics
