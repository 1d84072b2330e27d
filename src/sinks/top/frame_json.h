// A frame of `gpumeter top` as JSON (`top --once --format json`, docs/top.md): the frame's data
// (units with their owners, findings) and, derived from it, the rows of the pods view and the
// per-namespace totals. FrameFromJson reads the data back: FrameFromJson(FrameToJson(f)) == f.
// FrameToJson is snake_case (as frames were saved before); the output is camelCase, and
// FrameFromJson reads either. Unknown is null. Pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/top/frame.h"

namespace gpumeter::top {

nlohmann::json FrameToJson(const FrameData& frame);
Expected<FrameData> FrameFromJson(const nlohmann::json& j);

// FrameToJson plus "pods" (GroupRows by `by`, sorted, filtered) and "namespaces" (by namespace),
// in camelCase (a pod's label keys kept as they are).
Expected<nlohmann::json> FrameOutputJson(const FrameData& frame, const std::string& by,
                                         SortKey sort, const Filter& filter);

}  // namespace gpumeter::top
