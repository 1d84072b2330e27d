// libFuzzer target: the agent's Node object (API server reply or --node-file), as NodeFacts
// parses it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/node/node_facts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpumeter::k8s::NodeFacts facts;
  (void)facts.ApplyList(text);
  return 0;
}
