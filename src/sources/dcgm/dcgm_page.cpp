#include "sources/dcgm/dcgm_page.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <utility>

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

// Fields that change on every collection of a powered GPU (dcgm-exporter's default set has both):
// without one, a GPU at constant activity would look stale.
bool ChangesEveryCollection(const std::string& name) {
  return name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" || name == "DCGM_FI_DEV_POWER_USAGE";
}

tl::unexpected<Error> NotOneNode(const prom::PromSample& s, const std::string& what) {
  return MakeError(ErrorCode::kInvalidInput,
                   "line " + std::to_string(s.line) + ": more than " + what +
                       " on the page: not one node's dcgm-exporter (refused)");
}

}  // namespace

bool IsActivityField(const std::string& name) {
  return name == kGrEngineUtilRatio || name == kGrEngineActive || name == kDramUtilRatio ||
         name == kDramActive;
}

DcgmPageReader::DcgmPageReader(size_t max_line_bytes)
    : stream_({.sample = [this](prom::PromSample&& s) { return Add(s); },
               .type = nullptr,
               .check_repeats = IsActivityField},
              max_line_bytes) {}

Expected<void> DcgmPageReader::Feed(std::string_view chunk) { return stream_.Feed(chunk); }

Expected<DcgmPage> DcgmPageReader::Finish() {
  if (auto end = stream_.Finish(); !end) return tl::unexpected(end.error());
  out_.gr_active.merge(old_name_);  // keeps the new name's value where both are present
  out_.dram_active.merge(old_dram_name_);
  return std::move(out_);
}

Expected<void> DcgmPageReader::Add(const prom::PromSample& s) {
  ++out_.samples;
  out_.gpu_fields = out_.gpu_fields || ChangesEveryCollection(s.name);
  if (const auto* host = Label(s, "hostname", "Hostname")) {
    if (out_.hosts.size() < kMaxHosts || out_.hosts.count(*host))
      out_.hosts.insert(*host);
    else
      out_.more_hosts = true;
  }
  const auto* uuid = Label(s, "UUID", "uuid");
  if (uuid && !uuid->empty()) {
    auto it = out_.gpu_fingerprint.find(*uuid);
    if (it == out_.gpu_fingerprint.end()) {
      if (out_.gpu_fingerprint.size() >= kMaxPageGpus)
        return NotOneNode(s, std::to_string(kMaxPageGpus) + " GPUs");
      it = out_.gpu_fingerprint.emplace(*uuid, 0).first;
    }
    it->second = Mix(it->second, SampleHash(s));
  }
  if (!IsActivityField(s.name)) return {};
  if (++activity_series_ > kMaxActivitySeries)
    return NotOneNode(s, std::to_string(kMaxActivitySeries) + " activity series");
  const bool is_new = s.name == kGrEngineUtilRatio || s.name == kDramUtilRatio;
  const bool dram = s.name == kDramUtilRatio || s.name == kDramActive;
  if (!uuid || uuid->empty()) {
    Skip(out_, s, "has no UUID label");
    return {};
  }
  DcgmKey key{*uuid, std::nullopt};
  if (auto it = s.labels.find("GPU_I_ID"); it != s.labels.end() && !it->second.empty()) {
    uint32_t id = 0;
    const auto& v = it->second;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
    if (ec != std::errc() || end != v.data() + v.size()) {
      Skip(out_, s, "has GPU_I_ID '" + v + "', not a number");
      return {};
    }
    key.gpu_instance_id = id;
  }
  if (!std::isfinite(s.value) || s.value < 0) {
    Skip(out_, s, "has an invalid value (NaN, infinite or negative)");
    return {};
  }
  auto& into =
      dram ? (is_new ? out_.dram_active : old_dram_name_) : (is_new ? out_.gr_active : old_name_);
  into[key] = std::min(1.0, s.value);
  return {};
}

Expected<DcgmPage> ReadDcgmText(std::string_view text) {
  DcgmPageReader reader;
  if (auto fed = reader.Feed(text); !fed) return tl::unexpected(fed.error());
  return reader.Finish();
}

Expected<DcgmPage> ReadDcgmPage(const prom::PromPage& page) {
  DcgmPageReader reader;
  for (const auto& s : page.samples)
    if (auto added = reader.Add(s); !added) return tl::unexpected(added.error());
  return reader.Finish();
}

}  // namespace gpumeter::dcgm
