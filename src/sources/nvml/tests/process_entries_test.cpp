#include "sources/nvml/process_entries.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "sources/nvml/nvml_abi.h"

namespace gpumeter::nvml::detail {
namespace {

template <typename T>
std::vector<unsigned char> Bytes(const std::vector<T>& entries) {
  std::vector<unsigned char> out(entries.size() * sizeof(T));
  std::memcpy(out.data(), entries.data(), out.size());
  return out;
}

TEST(ProcessEntries, DecodesEachStride) {
  const auto v1 = Bytes<nvmlProcessInfo_v1_t>({{10, 100}, {11, NVML_VALUE_NOT_AVAILABLE_ULL}});
  auto p = DecodeProcessEntries(v1.data(), 2, 16, gpu::ProcessType::kCompute);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].pid, 10u);
  EXPECT_EQ(p[0].used_memory_bytes, 100u);
  EXPECT_FALSE(p[1].used_memory_bytes.has_value()) << "N/A must be unknown, not a number";
  EXPECT_FALSE(p[0].gpu_instance_id.has_value());

  const auto v2 = Bytes<nvmlProcessInfo_v2_t>({{20, 200, 0xFFFFFFFF, 0xFFFFFFFF}, {21, 300, 3, 0}});
  p = DecodeProcessEntries(v2.data(), 2, 24, gpu::ProcessType::kMps);
  EXPECT_EQ(p[1].pid, 21u);
  EXPECT_EQ(p[1].gpu_instance_id, 3u);
  EXPECT_EQ(p[1].compute_instance_id, 0u);
  EXPECT_FALSE(p[0].gpu_instance_id.has_value());
  EXPECT_EQ(p[0].type, gpu::ProcessType::kMps);

  const auto v3 = Bytes<nvmlProcessDetail_v1_t>(
      {{30, 300, 0xFFFFFFFF, 0xFFFFFFFF, 0}, {31, 400, 0xFFFFFFFF, 0xFFFFFFFF, 0}});
  p = DecodeProcessEntries(v3.data(), 2, 32, gpu::ProcessType::kCompute);
  EXPECT_EQ(p[1].pid, 31u);
  EXPECT_EQ(p[1].used_memory_bytes, 400u);
}

TEST(ProcessEntries, WrongStrideIsImplausible) {
  // 32-byte entries read as 24-byte ones (the 535.43–535.86 quirk): from the second entry on,
  // PIDs and memory are garbage.
  const auto wide = Bytes<nvmlProcessDetail_v1_t>({{30, 1000, 0xFFFFFFFF, 0xFFFFFFFF, 0},
                                                   {31, 2000, 0xFFFFFFFF, 0xFFFFFFFF, 0},
                                                   {32, 3000, 0xFFFFFFFF, 0xFFFFFFFF, 0}});
  const auto right = DecodeProcessEntries(wide.data(), 3, 32, gpu::ProcessType::kCompute);
  const auto wrong = DecodeProcessEntries(wide.data(), 3, 24, gpu::ProcessType::kCompute);
  EXPECT_EQ(CountImplausible(right, 1ull << 30), 0u);
  EXPECT_GE(CountImplausible(wrong, 1ull << 30), 2u);
}

TEST(ProcessEntries, PlausibilityRules) {
  std::vector<gpu::GpuProcess> p(5);
  p[0].pid = 0;                                       // impossible PID
  p[1].pid = 5000000;                                 // above pid_max
  p[2].pid = 7, p[2].used_memory_bytes = 2ull << 30;  // more than the device has
  p[3].pid = 8, p[3].gpu_instance_id = 4000;
  p[4].pid = 9, p[4].used_memory_bytes = 1ull << 20, p[4].gpu_instance_id = 2;
  EXPECT_EQ(CountImplausible(p, 1ull << 30), 4u);
}

}  // namespace
}  // namespace gpumeter::nvml::detail
