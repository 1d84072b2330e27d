// libFuzzer target: kubelet device IDs. A parsed ID names a unit (non-empty key) and a replica
// only when the input had "::"; errors always name the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/allocation/device_id.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view id(reinterpret_cast<const char*>(data), size);
  const auto r = gpumeter::k8s::ParseDeviceId(id);
  if (!r) {
    if (r.error().message.find("device ID '") != 0) std::abort();
    return 0;
  }
  if (gpumeter::k8s::UnitKey(*r).empty()) std::abort();
  const bool has_sep = id.find("::") != std::string_view::npos;
  if (r->replica && !has_sep && r->kind != gpumeter::k8s::DeviceIdKind::kGke) std::abort();
  (void)gpumeter::k8s::IsGpuResource(id);
  (void)gpumeter::k8s::MigProfileOfResource(id);
  return 0;
}
