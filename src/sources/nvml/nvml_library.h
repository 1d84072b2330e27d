// Owns a dlopen()ed NVML library and its resolved function table. A missing symbol leaves its
// pointer null: optional entry points are capabilities, not errors. Required ones (init, shutdown,
// error strings, device count/handle, UUID, name) must resolve or Open() fails.
// Movable-only; the table is valid while the NvmlLibrary lives. Calls through it are thread-safe
// as far as NVML is (it documents that it is).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "sources/nvml/nvml_symbols.h"

namespace gpumeter::nvml {

struct NvmlApi {
#define GPUMETER_NVML_MEMBER(name, type) \
  using name##_fn = type;                \
  name##_fn name = nullptr;
  GPUMETER_NVML_SYMBOLS(GPUMETER_NVML_MEMBER)
#undef GPUMETER_NVML_MEMBER
};

// Every symbol name in GPUMETER_NVML_SYMBOLS, in order.
const std::vector<std::string>& AllSymbolNames();

// The driver's soname; what Open() tries when no path is given.
inline constexpr const char* kNvmlSoname = "libnvidia-ml.so.1";

class NvmlLibrary {
 public:
  // Tries each candidate (a path or a soname for the dynamic linker's search) in order.
  static Expected<std::unique_ptr<NvmlLibrary>> Open(const std::vector<std::string>& candidates);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  // Text for an NVML return code (never null).
  std::string ErrorString(nvmlReturn_t code) const;

 private:
  NvmlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
  NvmlApi api_;
};

// RAII reference on NVML's init count: nvmlInit_v2 (or nvmlInit) now, nvmlShutdown at the end.
class NvmlSession {
 public:
  static Expected<std::unique_ptr<NvmlSession>> Start(const NvmlLibrary& lib);
  ~NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

 private:
  explicit NvmlSession(const NvmlLibrary& lib) : lib_(lib) {}
  const NvmlLibrary& lib_;
};

}  // namespace gpumeter::nvml
