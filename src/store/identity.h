// Is this SQLite file a gpumeter store? Checked before the store writes anything to it (WAL mode,
// user_version, tables), so `--store` pointed at another program's database is refused and left
// exactly as it was. New stores carry gpumeter's SQLite application_id; stores written before it
// existed are recognised by their schema (their tables and user_version), so an upgrade is never
// refused. Internal to the store.
#pragma once

#include <cstdint>
#include <string>

#include "common/error.h"

struct sqlite3;

namespace gpumeter::store {

// "GPMT": PRAGMA application_id of every gpumeter store (sqlite.org/fileformat.html, offset 68).
constexpr int32_t kApplicationId = 0x47504d54;

enum class FileKind {
  kEmpty,            // a new or empty database: becomes a store
  kGpumeter,         // carries the application_id
  kEarlierGpumeter,  // no application_id, but the schema of an earlier gpumeter
};

// Errors (kInvalidInput) name the path, the file's application_id, user_version and some of its
// tables; kUnavailable when the file cannot be read (locked, not a database).
Expected<FileKind> IdentifyStoreFile(sqlite3* db, const std::string& path);

}  // namespace gpumeter::store
