// Streams the records of a CSV file (RFC 4180: quoted fields, doubled quotes, line breaks inside
// quotes), plain or gzip-compressed (zlib tells them apart by the gzip magic), through libcsv in
// strict mode. Made for cloud bill exports of gigabytes: memory is bounded by one record — a
// field longer than kMaxCsvFieldBytes or a record of more than kMaxCsvFields fields is an error,
// not an allocation. A UTF-8 byte order mark at the start (Azure's exports carry one) is skipped.
// Errors name the file and the physical line (1-based) the record starts on: a quote that is
// never closed, a stray quote inside an unquoted field, a gzip stream cut short, a file that is
// not a regular file. Stateless; each call reads one file on the caller's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/error.h"

namespace gpumeter::bill {

inline constexpr size_t kMaxCsvFieldBytes = 1 << 20;  // a FOCUS Tags cell is a few KiB
inline constexpr size_t kMaxCsvFields = 1024;         // FOCUS 1.2 has 57 columns, AWS adds a few

// Called once per record, in order, with the line it starts on and its fields (valid for the
// call only). An error it returns stops the read and is returned as it is.
using CsvRecordFn = std::function<Expected<void>(int64_t line, const std::vector<std::string>&)>;

// Reads `path` to its end, or to the first error. Blank lines are skipped.
Expected<void> ReadCsvRecords(const std::string& path, const CsvRecordFn& on_record);

}  // namespace gpumeter::bill
