// The device rules of the guard: a GPU fallen off the bus, and the GPU's health as NVML reports it.
// States (a lost GPU, a pending or failed row remap, a pending page retirement or one past the
// limit, clocks held down) are raised while they last;
// a slowdown only once it held `slowdown_hold_s`, as short ones come with P-state changes. Events
// (an XID, a rise of the uncorrectable ECC count) are raised about the pods on the GPU at that
// moment and stay open for `event_open_s` after the last of them: the question after a fault is
// whose work it hit, not who holds the GPU later. An uncorrectable count already above 0 when the
// agent first reads it (errors before the agent started) is one finding about the unit.
// Each raise names a unit (the GPU, or each of its MIG instances; for an XID attributed to a GPU
// instance, that instance) and a container holding it, or none when nobody held it.
// Internal to the guard (guard.cpp turns each into a Finding). Not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/guard/guard.h"

namespace gpumeter::guard::detail {

// `holder` is null for a unit nobody held; `extra` tells apart findings of one kind, unit and
// holder (an XID's number); `evidence` says what was seen and who held how much.
using DeviceRaiser = std::function<void(Kind kind, const std::string& unit_uuid,
                                        const std::string& gpu_uuid, const domain::Owner* holder,
                                        const std::string& extra, std::string evidence)>;

class DeviceChecks {
 public:
  void Run(const PassView& pass, const GuardConfig& config, const DeviceRaiser& raise);

 private:
  struct Event {
    Kind kind;
    std::string unit_uuid, gpu_uuid, extra, evidence;
    std::optional<domain::Owner> holder;
    double until = 0;  // Unix seconds
  };
  void Record(const UnitView& u, Kind kind, const std::string& extra, const std::string& what,
              double until);
  void CheckEvents(const PassView& pass, const GuardConfig& config);
  void CheckStates(const PassView& pass, const GuardConfig& config, const DeviceRaiser& raise);
  static void CheckRetiredPages(const UnitView& u, const DeviceRaiser& raise);

  std::map<std::tuple<Kind, std::string, std::string, std::string>, Event> events_;
  std::map<std::string, uint64_t> ecc_seen_;      // uncorrectable count per GPU, last pass
  std::set<std::string> ecc_before_start_;        // GPUs with errors before the first reading
  std::map<std::string, double> slowdown_since_;  // per GPU, while its clocks are held down
};

// Retired pages (both causes) at which a GPU should be replaced (DCGM's diagnostic limit).
inline constexpr uint32_t kRetiredPagesLimit = 63;

// "48 (uncorrectable ECC error)": the XID and what NVIDIA's catalog says of it, where known.
std::string XidMeaning(uint64_t xid);
// XIDs NVIDIA's catalog puts on the application (the GPU is fine): 13, 31, 43, 45, 68.
bool IsApplicationXid(uint64_t xid);

}  // namespace gpumeter::guard::detail
