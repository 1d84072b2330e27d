// libFuzzer target: /proc/<pid>/cgroup text. Whatever the input, the parser returns an error or
// an identity whose IDs have the documented shape; it never crashes, hangs or reads out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sources/proc/cgroup.h"

namespace {
bool LowerHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto r = gpumeter::k8s::ParseProcCgroup(text);
  if (!r) {
    if (r.error().message.empty()) std::abort();
    return 0;
  }
  if (r->container_id && (r->container_id->size() != 64 || !LowerHex(*r->container_id)))
    std::abort();
  if (r->pod_uid) {
    const auto& u = *r->pod_uid;
    if (r->static_pod ? (u.size() != 32 || !LowerHex(u)) : u.size() != 36) std::abort();
  }
  return 0;
}
