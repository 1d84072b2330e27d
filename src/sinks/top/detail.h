// The detail pane of `gpumeter top` (Enter on a row of the pods or findings view): everything
// about one row that the list cuts to a column. A finding: its fields and the whole evidence,
// wrapped to the screen. A row of the pods view: its totals, the pods' labels, and each of its
// containers on each unit with its share there, which add up to the row. Pure.
#pragma once

#include <string>
#include <vector>

#include "sinks/top/layout.h"

namespace gpumeter::top {

// `width`: the screen's columns (0: 100).
std::vector<Line> FindingDetail(const FindingNow& finding, int width);
// `by` and `filter` as GroupRows made the row: the containers listed are the ones it adds up.
std::vector<Line> GroupDetail(const FrameData& frame, const GroupRow& row, const std::string& by,
                              const Filter& filter, int width);

}  // namespace gpumeter::top
