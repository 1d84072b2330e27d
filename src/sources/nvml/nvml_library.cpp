#include "sources/nvml/nvml_library.h"

#include <dlfcn.h>

namespace gpumeter::nvml {

const std::vector<std::string>& AllSymbolNames() {
  static const std::vector<std::string> kNames = {
#define GPUMETER_NVML_NAME(name, type) #name,
      GPUMETER_NVML_SYMBOLS(GPUMETER_NVML_NAME)
#undef GPUMETER_NVML_NAME
  };
  return kNames;
}

Expected<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(
    const std::vector<std::string>& candidates) {
  std::string tried;
  for (const auto& candidate : candidates) {
    // RTLD_LOCAL keeps NVML's symbols out of the global namespace; NOW surfaces a broken library
    // here rather than at the first call.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      tried += "\n  " + candidate + ": " + (why ? why : "not found");
      continue;
    }
    std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary(handle, candidate));
    NvmlApi& api = lib->api_;
#define GPUMETER_NVML_RESOLVE(name, type) api.name = reinterpret_cast<type>(dlsym(handle, #name));
    GPUMETER_NVML_SYMBOLS(GPUMETER_NVML_RESOLVE)
#undef GPUMETER_NVML_RESOLVE
    std::string missing;
    if (!api.nvmlInit_v2 && !api.nvmlInit) missing += " nvmlInit_v2|nvmlInit";
    if (!api.nvmlShutdown) missing += " nvmlShutdown";
    if (!api.nvmlErrorString) missing += " nvmlErrorString";
    if (!(api.nvmlDeviceGetCount_v2 && api.nvmlDeviceGetHandleByIndex_v2) &&
        !(api.nvmlDeviceGetCount && api.nvmlDeviceGetHandleByIndex))
      missing += " nvmlDeviceGetCount[_v2]+nvmlDeviceGetHandleByIndex[_v2]";
    if (!api.nvmlDeviceGetUUID) missing += " nvmlDeviceGetUUID";
    if (!api.nvmlDeviceGetName) missing += " nvmlDeviceGetName";
    if (!missing.empty()) {
      tried += "\n  " + candidate + ": not a usable NVML, missing:" + missing;
      continue;  // lib's destructor closes the handle
    }
    return lib;
  }
  return MakeError(ErrorCode::kNotFound,
                   "no NVML library found; looked for:" + tried +
                       "\nOn a GPU node, install the NVIDIA driver (or mount it into the container "
                       "and pass --nvml-library PATH). Without a GPU, try `gpumeter demo`.");
}

NvmlLibrary::~NvmlLibrary() {
  if (handle_) dlclose(handle_);
}

std::string NvmlLibrary::ErrorString(nvmlReturn_t code) const {
  const char* s = api_.nvmlErrorString ? api_.nvmlErrorString(code) : nullptr;
  return s ? std::string(s) : "NVML error " + std::to_string(code);
}

Expected<std::unique_ptr<NvmlSession>> NvmlSession::Start(const NvmlLibrary& lib) {
  const auto& api = lib.api();
  const nvmlReturn_t rc = api.nvmlInit_v2 ? api.nvmlInit_v2() : api.nvmlInit();
  if (rc == NVML_SUCCESS) return std::unique_ptr<NvmlSession>(new NvmlSession(lib));
  std::string hint;
  if (rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH)
    hint = " (driver/library version mismatch: the kernel module and " + lib.path() +
           " differ, usually after a driver upgrade without a reboot)";
  else if (rc == NVML_ERROR_DRIVER_NOT_LOADED)
    hint = " (the NVIDIA kernel driver is not loaded on this node)";
  else if (rc == NVML_ERROR_NO_PERMISSION)
    hint = " (no permission to open /dev/nvidia*)";
  return MakeError(ErrorCode::kUnavailable, "nvmlInit failed in " + lib.path() + ": " +
                                                lib.ErrorString(rc) + " (code " +
                                                std::to_string(rc) + ")" + hint);
}

NvmlSession::~NvmlSession() {
  // Shutdown errors at teardown cannot be acted on; NVML tolerates extra shutdowns.
  (void)lib_.api().nvmlShutdown();
}

}  // namespace gpumeter::nvml
