#include "core/cost/bill_match.h"

#include <algorithm>
#include <cctype>

namespace gpumeter::cost {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view LastSegment(std::string_view s) {
  const size_t slash = s.find_last_of('/');
  return slash == std::string_view::npos ? s : s.substr(slash + 1);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// i- and 8 or 17 hex digits: an EC2 instance id.
bool Ec2Id(std::string_view s) {
  if (!s.starts_with("i-") || (s.size() != 10 && s.size() != 19)) return false;
  return std::all_of(s.begin() + 2, s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The value after `/<key>/` in a path (case-insensitive key), or "".
std::string_view After(std::string_view path, std::string_view key) {
  const std::string lower = "/" + Lower(path);  // "projects/p/…" and "//…/projects/p/…" alike
  const size_t at = lower.find("/" + std::string(key) + "/");
  if (at == std::string::npos) return {};
  std::string_view rest = path.substr(at + key.size() + 1);
  return rest.substr(0, rest.find('/'));
}

// Azure: the scale set's path (lowercased, no trailing part) when `path` is in one.
std::string ScaleSetKey(std::string_view lower_path) {
  const std::string_view marker = "/virtualmachinescalesets/";
  const size_t at = lower_path.find(marker);
  if (at == std::string_view::npos) return "";
  const size_t end = lower_path.find('/', at + marker.size());
  return "azure-set:" + std::string(lower_path.substr(0, end));
}

// A Compute Engine VM's path: projects/P/zones/Z/instances/X (Cloud SQL, Memorystore, Filestore
// and others have /instances/ too, under no zone).
bool GceInstancePath(std::string_view id) {
  return !After(id, "projects").empty() && !After(id, "zones").empty() &&
         (id.find("compute.googleapis.com") != std::string_view::npos || !id.starts_with("//"));
}

std::string_view StripScheme(std::string_view id, std::string_view scheme) {
  id.remove_prefix(scheme.size());
  while (id.starts_with("/")) id.remove_prefix(1);
  return id;
}

}  // namespace

NodeMatcher::NodeMatcher(std::vector<BillNode> nodes) : nodes_(std::move(nodes)) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const std::string& p = nodes_[i].provider_id;
    if (p.starts_with("aws://")) {
      const std::string_view id = LastSegment(p);
      if (Ec2Id(id)) keys_.emplace("aws:" + std::string(id), i);
    } else if (p.starts_with("gce://")) {
      // gce://project/zone/name
      const std::string_view rest = StripScheme(p, "gce://");
      const size_t a = rest.find('/'), b = rest.find('/', a + 1);
      if (a != std::string_view::npos && b != std::string_view::npos) {
        const std::string project(rest.substr(0, a)), zone(rest.substr(a + 1, b - a - 1)),
            name(rest.substr(b + 1));
        keys_.emplace("gcp:" + project + "/" + zone + "/" + name, i);
        if (AllDigits(nodes_[i].instance_id)) {
          keys_.emplace("gcp:" + project + "/" + zone + "/" + nodes_[i].instance_id, i);
          keys_.emplace("gcp-id:" + nodes_[i].instance_id, i);
        }
      }
    } else if (p.starts_with("azure://")) {
      const std::string path = "/" + Lower(StripScheme(p, "azure://"));
      keys_.emplace("azure:" + path, i);
      if (const std::string set = ScaleSetKey(path); !set.empty()) keys_.emplace(set, i);
    }
  }
}

std::vector<size_t> NodeMatcher::Match(std::string_view resource_id) const {
  std::vector<std::string> keys;
  const std::string_view last = LastSegment(resource_id);
  if (Ec2Id(last)) {
    keys.push_back("aws:" + std::string(last));
  } else if (Lower(resource_id).find("/subscriptions/") != std::string::npos) {
    std::string path = Lower(resource_id);
    path = path.substr(path.find("/subscriptions/"));
    while (path.ends_with("/")) path.pop_back();
    if (path.find("/virtualmachines/") != std::string::npos)
      keys.push_back("azure:" + path);
    else if (const std::string set = ScaleSetKey(path);
             !set.empty() && set.size() == path.size() + std::string("azure-set:").size())
      keys.push_back(set);  // the scale set itself
  } else if (const std::string_view instance = After(resource_id, "instances");
             !instance.empty() && GceInstancePath(resource_id)) {
    const std::string_view project = After(resource_id, "projects"),
                           zone = After(resource_id, "zones");
    keys.push_back("gcp:" + std::string(project) + "/" + std::string(zone) + "/" +
                   std::string(instance));
    // A numeric id is unique on its own: the path may name the project by number, not by name.
    if (AllDigits(instance)) keys.push_back("gcp-id:" + std::string(instance));
  } else if (AllDigits(resource_id)) {
    // A bare number is a GCE instance id. A bare name is not matched: GCE names a VM's boot disk
    // after the VM, and other services' ids are bare names too.
    keys.push_back("gcp-id:" + std::string(resource_id));
  }
  std::vector<size_t> out;
  for (const auto& k : keys) {
    const auto [lo, hi] = keys_.equal_range(k);
    for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool NodeMatcher::LooksLikeVm(std::string_view resource_id) {
  const std::string lower = Lower(resource_id);
  return Ec2Id(LastSegment(resource_id)) || lower.find("/virtualmachines/") != std::string::npos ||
         lower.find("/virtualmachinescalesets/") != std::string::npos ||
         (!After(resource_id, "instances").empty() && GceInstancePath(resource_id));
}

}  // namespace gpumeter::cost
