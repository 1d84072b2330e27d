// Calls into NVML by their GPUMETER_NVML_SYMBOLS entry: each call is named by its entry (the name
// the watchdog is told and a failure is recorded under), so no call site spells a call's name.
// Private to the NVML source. NvmlCalls holds no state of its own: as thread-safe as the library
// and the observer it is given.
#pragma once

#include <string>

#include "domain/gpu_types.h"
#include "sources/gpu/gpu_source.h"
#include "sources/nvml/nvml_library.h"

namespace gpumeter::nvml {

// One enumerator per GPUMETER_NVML_SYMBOLS entry, in the list's order.
enum class Sym {
#define GPUMETER_NVML_ENUM(name, type) name,
  GPUMETER_NVML_SYMBOLS(GPUMETER_NVML_ENUM)
#undef GPUMETER_NVML_ENUM
};

// An entry's name (its symbol) and its pointer in a resolved table (null where unresolved).
template <Sym S>
struct Symbol;
#define GPUMETER_NVML_SYMBOL(sym, type)                                 \
  template <>                                                           \
  struct Symbol<Sym::sym> {                                             \
    static constexpr const char* kName = #sym;                          \
    static NvmlApi::sym##_fn Of(const NvmlApi& api) { return api.sym; } \
  };
GPUMETER_NVML_SYMBOLS(GPUMETER_NVML_SYMBOL)
#undef GPUMETER_NVML_SYMBOL

template <Sym S>
inline constexpr const char* kNameOf = Symbol<S>::kName;

class NvmlCalls {
 public:
  // Both not owned; they must outlive this. `observer` may be null.
  NvmlCalls(const NvmlLibrary& lib, gpu::CallObserver* observer) : lib_(lib), observer_(observer) {}

  const NvmlApi& api() const { return lib_.api(); }
  template <Sym S>
  bool Has() const {
    return Symbol<S>::Of(lib_.api()) != nullptr;
  }

  // `fn`, one of the table's pointers, called with `args` between the observer's Begin(name) and
  // End(); its return code as is. For a pointer picked at run time among an entry's versions.
  template <typename Fn, typename... Args>
  nvmlReturn_t Invoke(const char* name, Fn fn, Args... args) const {
    if (observer_) observer_->Begin(name);
    const nvmlReturn_t rc = fn(args...);
    if (observer_) observer_->End();
    return rc;
  }
  // S, which must be resolved, called as Invoke does, named by `Named`'s entry (a versioned
  // symbol that reports under its base name names that).
  template <Sym S, Sym Named = S, typename... Args>
  nvmlReturn_t Call(Args... args) const {
    return Invoke(kNameOf<Named>, Symbol<S>::Of(lib_.api()), args...);
  }

  // Records a failed call on `dev`; true if `rc` is success. GPU_IS_LOST marks the device lost;
  // NOT_SUPPORTED is a capability, not an error: false, and not recorded.
  bool Check(gpu::DeviceSample& dev, const char* call, nvmlReturn_t rc) const {
    if (rc == NVML_SUCCESS) return true;
    if (rc == NVML_ERROR_GPU_IS_LOST) dev.lost = true;
    if (rc != NVML_ERROR_NOT_SUPPORTED) dev.errors.push_back({call, rc, lib_.ErrorString(rc)});
    return false;
  }
  template <Sym S>
  bool Check(gpu::DeviceSample& dev, nvmlReturn_t rc) const {
    return Check(dev, kNameOf<S>, rc);
  }
  // S called and checked on `dev`: true on success.
  template <Sym S, typename... Args>
  bool Ok(gpu::DeviceSample& dev, Args... args) const {
    return Check(dev, kNameOf<S>, Call<S>(args...));
  }

  std::string ErrorString(nvmlReturn_t rc) const { return lib_.ErrorString(rc); }

 private:
  const NvmlLibrary& lib_;
  gpu::CallObserver* observer_;
};

}  // namespace gpumeter::nvml
