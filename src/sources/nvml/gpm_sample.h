// RAII owner of one GPM sample (private to the NVML source: nvml_gpu_source.cpp, gpm_metrics.cpp).
#pragma once

#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::nvml {

class NvmlGpuSource::GpmSample {
 public:
  GpmSample(const NvmlApi& api, nvmlGpmSample_t s) : api_(api), sample_(s) {}
  ~GpmSample() { (void)api_.nvmlGpmSampleFree(sample_); }  // nothing to do if freeing fails
  GpmSample(const GpmSample&) = delete;
  GpmSample& operator=(const GpmSample&) = delete;
  nvmlGpmSample_t get() const { return sample_; }

 private:
  const NvmlApi& api_;
  nvmlGpmSample_t sample_;
};

}  // namespace gpumeter::nvml
