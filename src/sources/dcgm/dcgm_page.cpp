#include "sources/dcgm/dcgm_page.h"

#include <charconv>
#include <cmath>
#include <functional>

namespace gpumeter::dcgm {
namespace {

const std::string* Label(const prom::PromSample& s, const char* a, const char* b) {
  if (auto it = s.labels.find(a); it != s.labels.end()) return &it->second;
  if (auto it = s.labels.find(b); it != s.labels.end()) return &it->second;
  return nullptr;
}

// FNV-style mixing of std::hash values: only equality between two reads matters.
uint64_t Mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }

uint64_t SampleHash(const prom::PromSample& s) {
  uint64_t h = std::hash<std::string>{}(s.name);
  for (const auto& [k, v] : s.labels)
    h = Mix(Mix(h, std::hash<std::string>{}(k)), std::hash<std::string>{}(v));
  return Mix(h, std::hash<double>{}(s.value));
}

void Skip(DcgmPage& out, const prom::PromSample& s, const std::string& why) {
  ++out.skipped;
  if (out.skipped_why.size() < 5)
    out.skipped_why.push_back("line " + std::to_string(s.line) + ": " + s.name + " " + why);
}

}  // namespace

DcgmPage ReadDcgmPage(const prom::PromPage& page) {
  DcgmPage out;
  out.samples = page.samples.size();
  // Kept apart: the new name wins for a key that has both.
  std::map<DcgmKey, double> old_name, old_dram_name;
  for (const auto& s : page.samples) {
    if (const auto* host = Label(s, "hostname", "Hostname")) out.hosts.insert(*host);
    const auto* uuid = Label(s, "UUID", "uuid");
    if (uuid && !uuid->empty()) {
      auto& h = out.gpu_fingerprint[*uuid];
      h = Mix(h, SampleHash(s));
    }
    const bool is_new = s.name == kGrEngineUtilRatio || s.name == kDramUtilRatio;
    const bool dram = s.name == kDramUtilRatio || s.name == kDramActive;
    if (!is_new && !dram && s.name != kGrEngineActive) continue;
    if (!uuid || uuid->empty()) {
      Skip(out, s, "has no UUID label");
      continue;
    }
    DcgmKey key{*uuid, std::nullopt};
    if (auto it = s.labels.find("GPU_I_ID"); it != s.labels.end() && !it->second.empty()) {
      uint32_t id = 0;
      const auto& v = it->second;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
      if (ec != std::errc() || end != v.data() + v.size()) {
        Skip(out, s, "has GPU_I_ID '" + v + "', not a number");
        continue;
      }
      key.gpu_instance_id = id;
    }
    if (!std::isfinite(s.value) || s.value < 0) {
      Skip(out, s, "has an invalid value (NaN, infinite or negative)");
      continue;
    }
    auto& into =
        dram ? (is_new ? out.dram_active : old_dram_name) : (is_new ? out.gr_active : old_name);
    into[key] = std::min(1.0, s.value);
  }
  out.gr_active.merge(old_name);  // keeps the new name's value where both are present
  out.dram_active.merge(old_dram_name);
  return out;
}

}  // namespace gpumeter::dcgm
