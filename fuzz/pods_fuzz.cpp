// libFuzzer target: the API server's pod list and watch lines (and the pods file), as PodStore
// applies them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/pods/pods.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpumeter::k8s::PodStore store;
  (void)store.ApplyList(text);
  (void)store.ApplyWatchLine(text);
  (void)gpumeter::k8s::ParsePod(text);
  return 0;
}
