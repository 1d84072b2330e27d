#include "store/identity.h"

#include <sqlite3.h>

#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace gpumeter::store {
namespace {

// The tables of schema version 1, the first gpumeter store.
const std::set<std::string> kTables{"meta",         "owners", "pod_labels",  "unit_hours",
                                    "unit_minutes", "units",  "usage_hours", "usage_minutes"};

Error Unreadable(sqlite3* db, const std::string& path) {
  const int primary = sqlite3_extended_errcode(db) & 0xff;
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT)
    return Error{ErrorCode::kInvalidInput,
                 "store " + path + ": " + sqlite3_errmsg(db) +
                     " (not a gpumeter store, or a damaged one; left unchanged: move it aside to "
                     "start a new one)"};
  return Error{ErrorCode::kUnavailable,
               "store " + path + ": reading what the file is: " + sqlite3_errmsg(db)};
}

// The first column of every row of `sql`, as text; nullopt on error.
std::optional<std::vector<std::string>> Column(sqlite3* db, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) return std::nullopt;
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> st(raw, sqlite3_finalize);
  std::vector<std::string> out;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    const auto* t = sqlite3_column_text(st.get(), 0);
    out.emplace_back(t ? reinterpret_cast<const char*>(t) : "");
  }
  if (rc != SQLITE_DONE) return std::nullopt;
  return out;
}

}  // namespace

Expected<FileKind> IdentifyStoreFile(sqlite3* db, const std::string& path) {
  const auto app = Column(db, "PRAGMA application_id");
  const auto version = Column(db, "PRAGMA user_version");
  const auto tables =
      Column(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  if (!app || !version || !tables || app->size() != 1 || version->size() != 1)
    return tl::unexpected(Unreadable(db, path));
  const int64_t id = std::stoll(app->front()), user_version = std::stoll(version->front());
  if (id == kApplicationId) return FileKind::kGpumeter;
  const std::set<std::string> have(tables->begin(), tables->end());
  if (id == 0 && have.empty() && user_version == 0) return FileKind::kEmpty;
  if (id == 0 && user_version >= 1 && have == kTables) return FileKind::kEarlierGpumeter;
  std::string listed;
  size_t n = 0;
  for (const auto& t : have)
    if (n++ < 5) listed += (listed.empty() ? "" : ", ") + t;
  if (have.size() > 5) listed += ", …";
  return MakeError(ErrorCode::kInvalidInput,
                   "store " + path + ": not a gpumeter store (application_id " +
                       std::to_string(id) + ", user_version " + std::to_string(user_version) +
                       ", tables: " + (listed.empty() ? "none" : listed) +
                       "); left unchanged: pass --store a new file or a gpumeter store");
}

}  // namespace gpumeter::store
