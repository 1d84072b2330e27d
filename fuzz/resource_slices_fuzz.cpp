// libFuzzer target: the API server's ResourceSlice list (DRA).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/slices/resource_slices.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpumeter::k8s::ResourceSliceStore store;
  (void)store.ApplyList(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
