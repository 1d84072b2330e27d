// Accept-Encoding as RFC 9110 §12.5.3 reads it: weights honoured ("gzip;q=0" refuses gzip),
// "*", names in any case, and what is malformed taken as a refusal.
#include "sinks/metrics/accept_encoding.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace gpumeter::metrics {
namespace {

TEST(AcceptEncoding, WeightsWildcardsAndCaseAsRfc9110ReadsThem) {
  const std::pair<std::string, bool> cases[] = {
      {"", false},
      {"identity", false},
      {"deflate, br", false},
      {"gzipped", false},  // not a substring match
      {"gzip", true},
      {"GZip", true},
      {"x-gzip", true},
      {"deflate, gzip;q=0.5", true},
      {" , gzip ,, ", true},  // empty list elements
      {"gzip;q=0", false},
      {"gzip ; Q = 0.000", false},
      {"gzip;q=0.001", true},
      {"gzip;q=1.0", true},
      {"gzip;q=1.000", true},
      {"*", true},
      {"*;q=0", false},
      {"*, gzip;q=0", false},       // named: its own weight, not the wildcard's
      {"gzip;q=0, x-gzip", false},  // the same coding twice: the refusal wins
      {"gzip, identity;q=0", true},
      {"gzip;q=0.5, identity;q=0.8", false},  // identity preferred
      {"identity, *;q=0.5", false},
      {"gzip;q=0.5, identity;q=0.5", true},
      {"gzip;q=2", false},  // malformed weights: not taken
      {"gzip;q=1.001", false},
      {"gzip;q=0.5000", false},
      {"gzip;q=", false},
      {"gzip;q=abc", false},
      {"gzip;level=9", true},  // a parameter the grammar lacks is passed over
  };
  for (const auto& [header, want] : cases) EXPECT_EQ(AcceptsGzip(header), want) << header;
}

}  // namespace
}  // namespace gpumeter::metrics
