// libFuzzer target: /proc/<pid>/stat and environ as the agent reads them (hostile processes
// choose their command names and environments).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/proc/proc_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpumeter::k8s::ParseStatStartTime(text);
  const auto comm = gpumeter::k8s::ParseStatComm(text);
  if (comm.size() > size) __builtin_trap();
  for (const auto& [k, v] : gpumeter::k8s::ParseGpuEnviron(text))
    if (!(k.rfind("NVIDIA_", 0) == 0 || k.rfind("CUDA_", 0) == 0)) __builtin_trap();
  return 0;
}
