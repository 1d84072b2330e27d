// The device rules of the guard: a GPU fallen off the bus, and the GPU's health as NVML reports it
// (uncorrectable ECC errors, row remaps pending or failed, clocks held down for heat or power).
// Each is raised about every unit of the GPU (the GPU, or each of its MIG instances) once per
// container holding it then — the pods the fault hit — or once for the unit when nobody held it.
// Internal to the guard (guard.cpp turns each into a Finding).
#pragma once

#include <functional>
#include <string>

#include "core/guard/guard.h"

namespace gpumeter::guard::detail {

// `holder` is null for a unit nobody held; `evidence` says what was seen (and who held how much).
using DeviceRaiser = std::function<void(Kind kind, const UnitView& unit,
                                        const domain::Owner* holder, std::string evidence)>;
void CheckDevices(const PassView& pass, const DeviceRaiser& raise);

}  // namespace gpumeter::guard::detail
