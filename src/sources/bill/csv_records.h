// Streams the records of a CSV file (RFC 4180: quoted fields, doubled quotes, line breaks inside
// quotes), plain or gzip-compressed (zlib tells them apart by the gzip magic), through libcsv in
// strict mode. Made for cloud bill exports of gigabytes: memory is bounded by one record — a
// record (the header included) whose fields come to more than kMaxCsvRecordBytes, or of more
// than kMaxCsvFields fields, is an error, not an allocation; at most about twice the cap is held
// (the record's fields, and libcsv's buffer of the field being read). A UTF-8 byte order mark at
// the start (Azure's exports carry one) is skipped. Errors name the file and the physical line
// (1-based) the record starts on — LF, CRLF and a lone CR each end a line, as each ends a record
// for libcsv: a quote that is never closed, a stray quote inside an unquoted field, a gzip stream
// cut short, a file that is not a regular file. Stateless; each call reads one file on the
// caller's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/error.h"

namespace gpumeter::bill {

// A FOCUS line is a few KiB (its Tags cell the most); 8 MiB is a thousand times that, and bounds
// what one hostile record can make the reader hold.
inline constexpr size_t kMaxCsvRecordBytes = size_t{8} << 20;
inline constexpr size_t kMaxCsvFields = 1024;  // FOCUS 1.2 has 57 columns, AWS adds a few

// Called once per record, in order, with the line it starts on and its fields (valid for the
// call only). An error it returns stops the read and is returned as it is.
using CsvRecordFn = std::function<Expected<void>(int64_t line, const std::vector<std::string>&)>;

// Reads `path` to its end, or to the first error. Blank lines are skipped.
Expected<void> ReadCsvRecords(const std::string& path, const CsvRecordFn& on_record);

}  // namespace gpumeter::bill
