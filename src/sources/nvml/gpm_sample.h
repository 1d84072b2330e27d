// RAII owner of one GPM sample (private to the NVML source: gpu_state.h, gpm_metrics.cpp).
#pragma once

#include "sources/nvml/nvml_library.h"

namespace gpumeter::nvml {

class GpmSample {
 public:
  // `api` must outlive the sample: it frees it.
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
