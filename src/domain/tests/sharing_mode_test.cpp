// A sharing mode's name is read in one place (flags, scenarios, node labels): it must be the exact
// inverse of the name every output prints.
#include "domain/sharing_mode.h"

#include <gtest/gtest.h>

#include <string>

namespace gpumeter::domain {
namespace {

TEST(SharingMode, EveryModeReadsBackFromItsName) {
  for (const SharingMode m :
       {SharingMode::kExclusive, SharingMode::kTimeSlicing, SharingMode::kMps, SharingMode::kMig}) {
    const auto back = ParseSharingMode(ToString(m));
    ASSERT_TRUE(back.has_value()) << ToString(m);
    EXPECT_EQ(*back, m);
  }
}

TEST(SharingMode, OnlyTheExactNameIsAMode) {
  for (const std::string text : {"", "MPS", "Mps", "time_slicing", "timeSlicing", "timeslicing",
                                 " mps", "mps ", "exclusive-process", "unknown", "mig:3g.40gb"})
    EXPECT_FALSE(ParseSharingMode(text).has_value()) << "'" << text << "'";
}

}  // namespace
}  // namespace gpumeter::domain
