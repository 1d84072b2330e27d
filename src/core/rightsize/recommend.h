// Rightsizing recommendations from usage histories (docs/rightsizing.md). For each workload:
//  - reclaim: it holds GPU capacity and used under `idle_below` of it through its history;
//  - mig: a smaller MIG profile holds its memory, compute and memory-busy-time targets (a whole GPU
//  or a
//    larger instance of a GPU with a profile table, mig_profiles.h);
//  - share: workloads that each hold a whole GPU of one model fit together on fewer GPUs
//    (time-slicing or MPS), their summed memory targets within the GPU's memory and compute
//    targets (and memory busy time, where measured) within one GPU, where that costs less than
//    moving each to MIG — across nodes where the histories cover several (read from Prometheus):
//    the reason names the others' nodes;
//  - keep: the allocation fits, the history is too short, or nothing smaller is known.
// Targets, VPA-style: memory = max(P95 of daily peaks, highest seen) × (1 + margin) — GPU memory
// is a hard limit, so nothing below the highest seen is ever recommended; compute = P90 of the
// per-minute use × (1 + margin). Savings are per month (730 h) at the configured prices: the
// GPU fraction given up × the price per GPU-hour; unknown (null) when the model has no price.
// Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cost/pricing.h"
#include "core/rightsize/history.h"

namespace gpumeter::rightsize {

enum class Action { kReclaim, kMig, kShare, kKeep };
const char* ToString(Action a);  // "reclaim", "mig", "share", "keep"

struct RecommendOptions {
  double margin = 0.15;
  double min_history_s = 86400;  // below this (or confidence under min_history_s / 1 day): keep
  double idle_below = 0.02;      // reclaim under this fraction of the held share (P99 of use)
  double hours_per_month = 730;
  // For the output only: what the histories were read from (a Prometheus: which series).
  std::string read_from;
};

struct Recommendation {
  Action action = Action::kKeep;
  WorkloadKey key;
  std::vector<std::string> pods;
  std::string node, model;
  std::string current;  // per replica: "whole GPU", "MIG 3g.40gb", "1/4 of a time-sliced GPU", …
  double current_gpu = 0;   // fraction of a GPU held, per replica
  uint32_t replicas = 1;    // pods holding it now; savings are for all of them
  std::string recommended;  // "MIG 1g.20gb", "time-slice one GPU with 2 replicas", "release it", …
  // The same two as codes from a bounded vocabulary, for label values (metrics): a held kind is
  // `gpu`, `mig-<profile>`, `time-slicing-<N>` or `mps-<N>` (1/N of a GPU); several kinds are
  // joined by `+`, a kind held K > 1 times is prefixed `Kx`. Recommended: the current code
  // (keep), `release`, `mig-<profile>`, or `time-slicing-<N>` (share one GPU N ways).
  std::string current_code, recommended_code;
  double recommended_gpu = 0;           // per replica
  std::vector<std::string> share_with;  // share: the other workloads on the same GPU
  // Evidence.
  double days = 0, confidence = 0;
  uint64_t samples = 0;
  std::optional<double> memory_p95_bytes, compute_p90;
  double memory_peak_bytes = 0, compute_peak = 0;
  double memory_target_bytes = 0, compute_target = 0;
  // Memory busy time, fraction of a GPU's (docs/attribution.md): P90 per minute and its target (P90
  // × (1 + margin)); unknown where the history measured none. A MIG profile fits only where its
  // share of the GPU's memory bandwidth (its memory eighths) holds the target.
  std::optional<double> traffic_p90;
  double traffic_target = 0;
  std::optional<double> monthly_savings;  // in `currency`
  std::string currency, price_source;
  std::string reason;
};

std::vector<Recommendation> Recommend(const std::map<WorkloadKey, WorkloadHistory>& histories,
                                      const cost::Pricing& pricing,
                                      const RecommendOptions& options);

}  // namespace gpumeter::rightsize
