#include "app/diagnose/metrics_doc.h"

#include <cstdio>

#include "sinks/metrics/catalogue.h"

namespace gpumeter::app {

int RunMetricsDoc() {
  std::fputs(metrics::CatalogueMarkdown().c_str(), stdout);
  return 0;
}

}  // namespace gpumeter::app
