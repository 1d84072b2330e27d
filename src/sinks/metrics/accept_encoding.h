// Whether a client takes a gzipped reply, from its Accept-Encoding header as RFC 9110 §12.5.3
// reads it: comma-separated codings, each with an optional weight (";q=" and a qvalue from 0 to
// 1, three decimals at most), names case-insensitive, "x-gzip" the same as "gzip", and "*" for
// any coding not named. A weight of 0 refuses the coding. Pure; thread-safe.
#pragma once

#include <string_view>

namespace gpumeter::metrics {

// True when gzip (or "*", gzip not being named) is listed with a weight above 0, and identity is
// not named with a higher one. No header, an empty one, a malformed weight (taken as 0) or a
// coding named twice with one weight 0: false, the body goes as it is.
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace gpumeter::metrics
