// How a pod's label (a --pod-label key) is named on the series that carry it: the agent writes it
// so, and every reader of those series (reports, rightsizing from Prometheus) asks for it so.
// Pure; thread-safe.
#pragma once

#include <cctype>
#include <string>

namespace gpumeter::domain {

// The Prometheus-safe label name for a pod label key: "app.kubernetes.io/team" ->
// "label_app_kubernetes_io_team" (every character but [A-Za-z0-9_] becomes '_', as
// kube-state-metrics names kube_pod_labels' labels).
inline std::string PodLabelName(const std::string& key) {
  std::string out = "label_";
  for (const char c : key) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

}  // namespace gpumeter::domain
