// `gpumeter audit`'s output: what the audit found (the dcgm-exporter page's inflated GPUs, the
// agent's open findings and its split of each inflated GPU) as a table for people or one JSON
// document (camelCase) for tools. Both write to stdout; not thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/audit/dcgm_audit.h"
#include "core/guard/findings.h"

namespace gpumeter::report {

// The agent's split of one physical GPU: one unit on it ("whole GPU" or its MIG profile) and one
// owner, with the owner's share of the unit's compute (0..1) and its memory (bytes) over the
// agent's last interval; unknown: nullopt.
struct AuditSplitRow {
  std::string unit, owner;
  std::optional<double> compute_ratio, memory_bytes;
};

// What a gpumeter agent said: its node, whether it has taken a good sample yet, its open
// findings, and its split of each inflated GPU of the page (by GPU UUID; none or empty: the
// agent does not account that GPU).
struct AuditAgent {
  std::string url, node;
  bool checked = false;
  std::vector<guard::Finding> findings;
  std::map<std::string, std::vector<AuditSplitRow>> splits;
};

// What the audit found; a source not asked for stays empty.
struct AuditResult {
  std::string dcgm_source;  // --dcgm-metrics as given (a file or a URL)
  double threshold = 0;     // the factor above which a GPU is inflated
  std::optional<audit::DcgmAudit> dcgm;
  std::optional<AuditAgent> agent;
  size_t inflated = 0;                   // GPUs of the page whose pods add up to more than it
  std::optional<guard::Severity> worst;  // an inflated GPU counts as a warning; none: nullopt
};

void PrintAuditTable(const AuditResult& r);
void PrintAuditJson(const AuditResult& r);

}  // namespace gpumeter::report
