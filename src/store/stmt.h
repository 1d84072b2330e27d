// A prepared SQLite statement, finalized with the object (RAII for sqlite3_stmt), and the floor
// and ceiling divisions the store's minute and hour keys need (negative times round down).
// Internal to the store. Not thread-safe: one statement, one thread.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace gpumeter::store {

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK && stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }
  bool Bind(int i, int64_t v) { return sqlite3_bind_int64(stmt_, i, v) == SQLITE_OK; }
  bool Bind(int i, double v) { return sqlite3_bind_double(stmt_, i, v) == SQLITE_OK; }
  bool Bind(int i, const std::string& v) {
    return sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) ==
           SQLITE_OK;
  }
  int Step() { return sqlite3_step(stmt_); }
  // Ready for the next row of binds.
  bool Reset() {
    return sqlite3_reset(stmt_) == SQLITE_OK && sqlite3_clear_bindings(stmt_) == SQLITE_OK;
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

inline int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

}  // namespace gpumeter::store
