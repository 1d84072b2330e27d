// `gpumeter doctor`'s check of the dcgm-exporter page (doctor_checks.h: CheckDcgm).
#include <fmt/format.h>

#include "app/diagnose/doctor_checks.h"
#include "sources/dcgm/dcgm_page.h"
#include "sources/dcgm/dcgm_source.h"

namespace gpumeter::app {
namespace {

constexpr const char* kFields =
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE (DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO from DCGM 4.6)";

CheckResult Dcgm(CheckStatus status, std::string detail, std::string fix = {}) {
  return {"dcgm", status, std::move(detail), std::move(fix)};
}

// "GPU-…/GI n" for up to five instances.
std::string InstanceList(const std::vector<std::pair<std::string, uint32_t>>& v) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < 5; ++i)
    out += fmt::format("{}{}/GI {}", i ? ", " : "", v[i].first, v[i].second);
  return v.size() > 5 ? out + fmt::format(" and {} more", v.size() - 5) : out;
}

// What the page says about NVML's GPUs and MIG instances.
CheckResult Match(const std::string& url, const dcgm::DcgmPage& page, const NvmlFindings& nvml) {
  size_t matched_gpus = 0;
  for (const auto& g : nvml.gpus) matched_gpus += page.gpu_fingerprint.count(g);
  std::string hosts;
  for (const auto& h : page.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
  if (page.more_hosts) hosts += ", …";
  if (nvml.loaded && !nvml.gpus.empty() && matched_gpus == 0)
    return Dcgm(CheckStatus::kFail,
                fmt::format("{}: none of this node's {} GPU(s) is on the page (its hosts: {})", url,
                            nvml.gpus.size(), hosts.empty() ? "?" : hosts),
                "the URL must reach this node's exporter: $(NODE_IP) from status.hostIP with a "
                "hostPort, or a Service with internalTrafficPolicy: Local (docs/deploy.md)");
  std::vector<std::pair<std::string, uint32_t>> missing;  // and NVML has no activity for them
  for (const auto& m : nvml.mig_instances)
    if (!page.gr_active.count({m.first, m.second}) && !nvml.mig_with_gpm.count(m))
      missing.push_back(m);
  const std::string detail = fmt::format(
      "{}: {} activity series, {} of {} GPU(s) on the page, {} MIG instance(s) of "
      "{} with activity",
      url, page.gr_active.size(), matched_gpus, nvml.gpus.size(),
      nvml.mig_instances.size() - missing.size(), nvml.mig_instances.size());
  if (!missing.empty())
    return Dcgm(CheckStatus::kFail, detail + "; no activity for " + InstanceList(missing),
                "the exporter lists GPU instances as DCGM sees them: restart it after a MIG "
                "layout change (its entity list is read at start)");
  if (!page.gpu_fields)
    return Dcgm(CheckStatus::kWarn,
                detail + "; no DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION or DCGM_FI_DEV_POWER_USAGE",
                "keep one of them in the exporter's counters: the agent tells a new collection "
                "by them, and a GPU at steady activity would look stale without");
  return Dcgm(CheckStatus::kOk, detail);
}

}  // namespace

CheckResult CheckDcgm(const std::string& url, const NvmlFindings& nvml) {
  if (url.empty()) {
    if (nvml.mig_instances.size() > nvml.mig_with_gpm.size())
      return Dcgm(CheckStatus::kWarn,
                  fmt::format("not configured; {} MIG instance(s) without GPM: their activity is "
                              "unknown (compute unattributed)",
                              nvml.mig_instances.size() - nvml.mig_with_gpm.size()),
                  "give --dcgm-metrics http://$(NODE_IP):9400/metrics (docs/deploy.md, DCGM "
                  "activity)");
    return Dcgm(CheckStatus::kSkip, "not configured (--dcgm-metrics)");
  }
  dcgm::DcgmSourceOptions o;
  o.url = url;
  bool page_error = false;
  const auto page = dcgm::FetchDcgmPage(o, &page_error);
  if (!page && page_error)
    return Dcgm(CheckStatus::kFail, page.error().message, "is this a dcgm-exporter /metrics page?");
  if (!page)
    return Dcgm(CheckStatus::kFail, page.error().message,
                "is dcgm-exporter running on this node and published on that address? "
                "(docs/deploy.md, DCGM activity)");
  const auto& read = *page;
  if (read.gr_active.empty())
    return Dcgm(CheckStatus::kFail,
                fmt::format("{}: {} samples, no {}{}", url, read.samples, kFields,
                            read.skipped ? fmt::format(" ({} skipped: {})", read.skipped,
                                                       read.skipped_why.front())
                                         : ""),
                "enable DCGM_FI_PROF_GR_ENGINE_ACTIVE in the exporter's counters (it is in "
                "default-counters.csv; profiling needs the SYS_ADMIN capability)");
  return Match(url, read, nvml);
}

}  // namespace gpumeter::app
