// Test helper: an NvmlGpuSource over one fake libnvidia-ml.so.1 profile serving one scenario, with
// the fake's clock pinned by hand. Goes through the real loader (dlopen + dlsym).
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "sources/nvml/nvml_gpu_source.h"
#include "support/paths.h"

namespace gpumeter::testing {

inline uint64_t WallUs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Writes `yaml` to a fresh temp file and returns its path.
inline std::string WriteTempScenario(const std::string& yaml, const std::string& stem) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpumeter-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / (stem + ".yaml");
  std::ofstream(path) << yaml;
  return path.string();
}

class FakeNvml {
 public:
  // Serves `scenario_path` from `profile`; the fake clock is then pinned at `t_s`. `watch_xid`:
  // the source waits for XID events on its own thread (NvmlSourceOptions), each wait 50 ms.
  FakeNvml(const std::string& profile, const std::string& scenario_path, double t_s = 0,
           gpu::CallObserver* observer = nullptr, bool watch_xid = false) {
    ::setenv("GPUMETER_FAKE_NVML_SCENARIO", scenario_path.c_str(), 1);
    // The fake stamps samples at this epoch + t; the source follows the same clock.
    epoch0_us_ = WallUs();
    ::setenv("GPUMETER_FAKE_NVML_EPOCH_US", std::to_string(epoch0_us_).c_str(), 1);
    ::setenv("GPUMETER_FAKE_NVML_START_S", "0", 1);
    control_ = dlopen(FakeNvmlPath(profile).c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(control_, nullptr) << dlerror();
    set_time_ = reinterpret_cast<void (*)(double)>(dlsym(control_, "gpumeterFakeNvmlSetTime"));
    nvml::NvmlSourceOptions o;
    o.library_candidates = {FakeNvmlPath(profile)};
    // Read from the XID watcher's thread too.
    o.wall_clock_us = [this] { return epoch0_us_ + static_cast<uint64_t>(t_s_.load() * 1e6); };
    o.observer = observer;
    o.watch_xid = watch_xid;
    o.xid_wait = std::chrono::milliseconds(50);
    auto src = nvml::NvmlGpuSource::Create(o);
    EXPECT_TRUE(src) << (src ? "" : src.error().message);
    if (src) source_ = std::move(*src);
    SetTime(t_s);
  }
  ~FakeNvml() {
    source_.reset();
    if (control_) dlclose(control_);
  }
  void SetTime(double t_s) {
    t_s_ = t_s;
    if (set_time_) set_time_(t_s);
  }
  nvml::NvmlGpuSource& source() { return *source_; }
  bool ok() const { return source_ != nullptr; }
  gpu::GpuSnapshot Sample() {
    auto s = source_->Sample();
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    return s ? *s : gpu::GpuSnapshot{};
  }

 private:
  void* control_ = nullptr;
  void (*set_time_)(double) = nullptr;
  uint64_t epoch0_us_ = 0;
  std::atomic<double> t_s_{0};
  std::unique_ptr<nvml::NvmlGpuSource> source_;
};

}  // namespace gpumeter::testing
