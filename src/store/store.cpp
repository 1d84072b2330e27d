#include "store/store.h"

#include "store/identity.h"
#include "store/query.h"
#include "store/schema.h"
#include "store/stmt.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>

namespace gpumeter::store {

// Per level (0 minutes, 1 hours): the unit and usage upserts.
struct Store::Statements {
  Statements(sqlite3* db)
      : unit{Stmt(db, kUnitUpsert[0]), Stmt(db, kUnitUpsert[1])},
        usage{Stmt(db, kUsageUpsert[0]), Stmt(db, kUsageUpsert[1])} {}
  bool ok() const { return unit[0].ok() && unit[1].ok() && usage[0].ok() && usage[1].ok(); }
  Stmt unit[2];
  Stmt usage[2];
};

Error Store::Fail(const std::string& what) const {
  const int code = db_ ? sqlite3_extended_errcode(db_) : SQLITE_CANTOPEN;
  std::string msg =
      "store " + path_ + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "cannot open");
  const int primary = code & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
    msg += " (another process holds the database; is a second agent writing to it?)";
  if (primary == SQLITE_FULL)
    msg += " (the disk or its quota is full; the store's last complete interval is kept)";
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
    msg += " (the file is not a gpumeter store or is damaged; move it aside to start a new one)";
  if (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN)
    msg += " (check the directory exists and is writable)";
  const ErrorCode ec = primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
                           ? ErrorCode::kInvalidInput
                           : ErrorCode::kUnavailable;
  return Error{ec, msg};
}

Expected<void> Store::Exec(const char* sql) const {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK)
    return tl::unexpected(Fail(std::string("executing ") + std::string(sql).substr(0, 40)));
  return {};
}

namespace {

// Every pod's usage is in the store: only the agent's user may read it. SQLite creates a new
// database 0644 (less the umask) and gives -wal and -shm the database's mode, so the file is
// made 0600 first; an older store (or one whose mode was widened) is narrowed once it is known
// to be ours. Best effort: a file we cannot chmod is still used, as before.
void MakePrivate(const std::string& path) {
  for (const auto& p : {path, path + "-wal", path + "-shm"}) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) != 0)
      (void)::chmod(p.c_str(), st.st_mode & 0700);
  }
}

void CreatePrivate(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) ::close(fd);  // EEXIST and other failures: sqlite3_open_v2 below decides
}

}  // namespace

Expected<std::unique_ptr<Store>> Store::Open(const std::string& path, StoreOptions options) {
  std::unique_ptr<Store> s(new Store(path, options));
  if (path != ":memory:" && !path.empty()) CreatePrivate(path);
  if (sqlite3_open_v2(path.c_str(), &s->db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK)
    return tl::unexpected(s->Fail("opening"));
  // Short: the writer runs on the sampling thread, which must not stall behind another process's
  // lock; the interval is retried with the next one.
  if (sqlite3_busy_timeout(s->db_, 200) != SQLITE_OK)
    return tl::unexpected(s->Fail("setting the busy timeout"));
  // Before anything is written: another program's database is refused and left as it was.
  const auto kind = IdentifyStoreFile(s->db_, path);
  if (!kind) return tl::unexpected(kind.error());
  if (path != ":memory:" && !path.empty()) MakePrivate(path);
  // WAL: readers never block the writer, and a killed writer leaves a consistent file.
  {
    Stmt wal(s->db_, "PRAGMA journal_mode=WAL");
    if (!wal.ok() || wal.Step() != SQLITE_ROW) return tl::unexpected(s->Fail("switching to WAL"));
    if (wal.Text(0) != "wal")
      return MakeError(ErrorCode::kUnavailable,
                       "store " + path + ": WAL mode refused (journal_mode " + wal.Text(0) + ")");
  }  // finalized: no statement may be pending when a transaction commits
  for (const char* pragma : {"PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"})
    if (auto r = s->Exec(pragma); !r) return tl::unexpected(r.error());
  const std::string cache = "PRAGMA cache_size=-" + std::to_string(std::max(64, options.cache_kib));
  if (auto r = s->Exec(cache.c_str()); !r) return tl::unexpected(r.error());
  if (auto r = s->Migrate(); !r) return tl::unexpected(r.error());
  if (*kind != FileKind::kGpumeter)  // new, or written before stores carried the id
    if (auto r = s->Exec(("PRAGMA application_id=" + std::to_string(kApplicationId)).c_str()); !r)
      return tl::unexpected(r.error());
  auto rolled = s->ReadRolledUpTo();
  if (!rolled) return tl::unexpected(rolled.error());
  s->rolled_up_to_hour_ = *rolled;
  s->stmts_ = std::make_unique<Statements>(s->db_);
  if (!s->stmts_->ok()) return tl::unexpected(s->Fail("preparing statements"));
  return s;
}

Expected<int64_t> Store::ReadRolledUpTo() const {
  Stmt r(db_, "SELECT value FROM meta WHERE key = 'rolled_up_to_hour'");
  if (!r.ok() || r.Step() != SQLITE_ROW) return tl::unexpected(Fail("reading the rollup mark"));
  return r.Int(0);
}

Expected<void> Store::RollUpBefore(int64_t hour) {
  if (hour <= rolled_up_to_hour_) return {};
  const int64_t from = rolled_up_to_hour_ * 60, to = hour * 60;
  for (const char* q : kRollUp) {
    Stmt st(db_, q);
    if (!st.ok() || !st.Bind(1, from) || !st.Bind(2, to) || st.Step() != SQLITE_DONE)
      return tl::unexpected(Fail("rolling up hours"));
  }
  rolled_up_to_hour_ = hour;
  return {};
}

Expected<std::unique_ptr<Store>> Store::OpenReadOnly(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return MakeError(ErrorCode::kNotFound, "store " + path + ": no such file");
  std::unique_ptr<Store> s(new Store(path, {}));
  if (sqlite3_open_v2(path.c_str(), &s->db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK)
    return tl::unexpected(s->Fail("opening"));
  if (sqlite3_busy_timeout(s->db_, 2000) != SQLITE_OK)
    return tl::unexpected(s->Fail("setting the busy timeout"));
  if (auto kind = IdentifyStoreFile(s->db_, path); !kind) return tl::unexpected(kind.error());
  Stmt v(s->db_, "PRAGMA user_version");
  if (!v.ok() || v.Step() != SQLITE_ROW)
    return tl::unexpected(s->Fail("reading the schema version"));
  if (v.Int(0) < kOldestReadable || v.Int(0) > kSchemaVersion)
    return MakeError(ErrorCode::kInvalidInput,
                     "store " + path + ": schema version " + std::to_string(v.Int(0)) +
                         ", this gpumeter reads " + std::to_string(kOldestReadable) + " to " +
                         std::to_string(kSchemaVersion) +
                         (v.Int(0) == 0 ? " (not a gpumeter store, or empty)" : ""));
  s->schema_version_ = v.Int(0);
  return s;
}

Store::Store(std::string path, StoreOptions options) : path_(std::move(path)), options_(options) {}

Store::~Store() {
  stmts_.reset();  // statements before the connection
  sqlite3_close_v2(db_);
}

Expected<void> Store::Migrate() {
  int64_t version = 0;
  {
    Stmt v(db_, "PRAGMA user_version");
    if (!v.ok() || v.Step() != SQLITE_ROW)
      return tl::unexpected(Fail("reading the schema version"));
    version = v.Int(0);
  }
  if (version > kSchemaVersion)
    return MakeError(ErrorCode::kInvalidInput,
                     "store " + path_ + ": schema version " + std::to_string(version) +
                         " was written by a newer gpumeter (this one knows " +
                         std::to_string(kSchemaVersion) + ")");
  for (int64_t i = version; i < kSchemaVersion; ++i) {
    if (auto r = Exec("BEGIN IMMEDIATE"); !r) return r;
    std::string sql = kMigrations[i];
    for (const auto& [mark, level] : {std::pair{"@MINUTES@", 0}, std::pair{"@HOURS@", 1}})
      if (const auto at = sql.find(mark); at != std::string::npos)
        sql.replace(at, std::strlen(mark), UnrecordedTrafficSql(level));
    auto r = Exec(sql.c_str());
    if (r) r = Exec(("PRAGMA user_version=" + std::to_string(i + 1)).c_str());
    if (r) r = Exec("COMMIT");
    if (!r) {
      (void)Exec("ROLLBACK");
      return r;
    }
  }
  schema_version_ = kSchemaVersion;
  return {};
}

Expected<int64_t> Store::UnitId(const UnitKey& k) {
  if (auto it = unit_ids_.find(k); it != unit_ids_.end()) return it->second;
  Stmt ins(db_,
           "INSERT INTO units(node, uuid, gpu_uuid, model, mig_profile, mode, fraction) "
           "VALUES(?,?,?,?,?,?,?) "
           "ON CONFLICT DO UPDATE SET node = excluded.node RETURNING id");
  if (!ins.ok() || !ins.Bind(1, k.node) || !ins.Bind(2, k.uuid) || !ins.Bind(3, k.gpu_uuid) ||
      !ins.Bind(4, k.model) || !ins.Bind(5, k.mig_profile) ||
      !ins.Bind(6, std::string(domain::ToStringOr(k.mode, ""))) || !ins.Bind(7, k.fraction) ||
      ins.Step() != SQLITE_ROW)
    return tl::unexpected(Fail("recording unit " + k.uuid));
  new_units_.push_back(k);
  return unit_ids_[k] = ins.Int(0);
}

Expected<int64_t> Store::OwnerId(const domain::Owner& o) {
  if (auto it = owner_ids_.find(o); it != owner_ids_.end()) return it->second;
  Stmt ins(db_,
           "INSERT INTO owners(kind, namespace, pod, container) VALUES(?,?,?,?) "
           "ON CONFLICT DO UPDATE SET kind = excluded.kind RETURNING id");
  if (!ins.ok() || !ins.Bind(1, std::string(domain::ToString(o.kind))) || !ins.Bind(2, o.ns) ||
      !ins.Bind(3, o.pod) || !ins.Bind(4, o.container) || ins.Step() != SQLITE_ROW)
    return tl::unexpected(Fail("recording owner " + o.ns + "/" + o.pod + "/" + o.container));
  new_owners_.push_back(o);
  return owner_ids_[o] = ins.Int(0);
}

Expected<void> Store::Write(const IntervalRecord& rec) {
  if (auto r = Exec("BEGIN IMMEDIATE"); !r) return r;
  new_units_.clear();
  new_owners_.clear();
  if (unit_ids_.size() + owner_ids_.size() > 100'000)
    unit_ids_.clear(), owner_ids_.clear();  // re-read as needed
  auto body = [&]() -> Expected<void> {
    const int64_t minute = FloorDiv(rec.end_unix_s, 60), hour = FloorDiv(minute, 60);
    const int64_t suspect = rec.clock_suspect ? 1 : 0;
    // Under the write lock: another writer of this file may have rolled hours up meanwhile.
    auto mark = ReadRolledUpTo();
    if (!mark) return tl::unexpected(mark.error());
    rolled_up_to_hour_ = *mark;
    // A new hour closes the ones before it: their minutes become hourly rows now.
    if (auto r = RollUpBefore(hour); !r) return r;
    // Minutes always; the hour too when it was rolled up already (a clock stepped back).
    const int levels = hour < rolled_up_to_hour_ ? 2 : 1;
    for (int level = 0; level < levels; ++level) {
      const int64_t bucket = level == 0 ? minute : hour;
      Stmt& us = stmts_->unit[level];
      Stmt& os = stmts_->usage[level];
      for (const auto& u : rec.units) {
        auto uid = UnitId(u.unit);
        if (!uid) return tl::unexpected(uid.error());
        if (!us.Bind(1, bucket) || !us.Bind(2, *uid) || !us.Bind(3, u.seconds) ||
            !us.Bind(4, u.memory_capacity_byte_seconds) || !us.Bind(5, u.energy_joules) ||
            !us.Bind(6, u.energy_unknown_seconds) || !us.Bind(7, suspect) ||
            us.Step() != SQLITE_DONE || !us.Reset())
          return tl::unexpected(Fail("writing unit " + u.unit.uuid));
        for (const auto& o : u.owners) {
          auto oid = OwnerId(o.owner);
          if (!oid) return tl::unexpected(oid.error());
          if (!os.Bind(1, bucket) || !os.Bind(2, *uid) || !os.Bind(3, *oid) ||
              !os.Bind(4, o.memory_byte_seconds) || !os.Bind(5, o.compute_seconds) ||
              !os.Bind(6, o.energy_joules) || !os.Bind(7, o.requested_share_seconds) ||
              !os.Bind(8, o.compute_unknown_seconds) || !os.Bind(9, o.compute_bound_seconds) ||
              !os.Bind(10, o.memory_busy_seconds) || !os.Bind(11, o.memory_busy_unknown_seconds) ||
              !os.Bind(12, o.memory_busy_bound_seconds) || !os.Bind(13, o.energy_bound_joules) ||
              !os.Bind(14, suspect) || os.Step() != SQLITE_DONE || !os.Reset())
            return tl::unexpected(Fail("writing usage on unit " + u.unit.uuid));
        }
      }
    }
    if (rec.node)
      if (auto r = WriteNode(*rec.node, rec.end_unix_s); !r) return r;
    Stmt ls(
        db_,
        "INSERT INTO pod_labels VALUES(?,?,?) ON CONFLICT DO UPDATE SET labels = excluded.labels");
    if (!ls.ok()) return tl::unexpected(Fail("preparing the labels statement"));
    for (const auto& [key, labels] : rec.pod_labels) {
      const std::string json =
          nlohmann::json(labels).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (!ls.Bind(1, key.first) || !ls.Bind(2, key.second) || !ls.Bind(3, json) ||
          ls.Step() != SQLITE_DONE || !ls.Reset())
        return tl::unexpected(Fail("writing the labels of " + key.first + "/" + key.second));
    }
    return Exec("COMMIT");
  };
  const int64_t rolled_before =
      rolled_up_to_hour_;  // RollUpBefore moves it; a rollback moves it back
  auto r = body();
  if (!r) {
    // A statement that failed mid-step must be reset before the rollback can run.
    stmts_->unit[0].Reset(), stmts_->unit[1].Reset(), stmts_->usage[0].Reset(),
        stmts_->usage[1].Reset();
    (void)Exec("ROLLBACK");
    for (const auto& k : new_units_) unit_ids_.erase(k);  // ids of a rolled-back transaction
    for (const auto& o : new_owners_) owner_ids_.erase(o);
    rolled_up_to_hour_ = rolled_before;
  }
  return r;
}

Expected<void> Store::ReleaseMemory() {
  if (sqlite3_db_release_memory(db_) != SQLITE_OK)
    return tl::unexpected(Fail("releasing the page cache"));
  return {};
}

Expected<std::map<int64_t, std::vector<UnitRecord>>> Store::Query(int64_t from, int64_t to,
                                                                  int64_t bucket_s) const {
  // One read transaction: one snapshot, whatever the agent commits meanwhile (WAL).
  if (auto r = Exec("BEGIN"); !r) return tl::unexpected(r.error());
  auto result = QuerySnapshot(from, to, bucket_s);
  (void)Exec("COMMIT");  // read-only: nothing to lose
  return result;
}

Expected<std::map<int64_t, std::vector<UnitRecord>>> Store::QuerySnapshot(int64_t from, int64_t to,
                                                                          int64_t bucket_s) const {
  auto rolled = ReadRolledUpTo();  // another process (the agent) may have moved it
  if (!rolled) return tl::unexpected(rolled.error());
  return ReadSums(
      db_, [this](const std::string& what) { return Fail(what); }, path_, schema_version_, *rolled,
      from, to, bucket_s);
}

Expected<std::vector<UnitRecord>> Store::Usage(int64_t from, int64_t to) const {
  auto q = Query(from, to, 0);
  if (!q) return tl::unexpected(q.error());
  return q->empty() ? std::vector<UnitRecord>{} : std::move(q->begin()->second);
}

Expected<std::map<int64_t, std::vector<UnitRecord>>> Store::HourlyUsage(int64_t from,
                                                                        int64_t to) const {
  return Query(from, to, 3600);
}

Expected<std::map<int64_t, std::vector<UnitRecord>>> Store::MinuteUsage(int64_t from,
                                                                        int64_t to) const {
  return Query(from, to, 60);
}

Expected<std::map<int64_t, std::vector<UnitRecord>>> Store::BucketUsage(int64_t from, int64_t to,
                                                                        int64_t bucket_s) const {
  if (bucket_s <= 0 || bucket_s % 60 != 0)
    return MakeError(ErrorCode::kInvalidInput, "store " + path_ + ": a bucket of " +
                                                   std::to_string(bucket_s) +
                                                   " s is not a whole number of minutes");
  return Query(from, to, bucket_s);
}

Expected<std::optional<std::pair<int64_t, int64_t>>> Store::Span() const {
  // Minutes where they are kept; hours where the minutes were pruned (or not yet rolled up).
  Stmt s(db_,
         "SELECT (SELECT MIN(minute) FROM unit_minutes), (SELECT MAX(minute) FROM unit_minutes), "
         "(SELECT MIN(hour) FROM unit_hours), (SELECT MAX(hour) FROM unit_hours)");
  if (!s.ok() || s.Step() != SQLITE_ROW) return tl::unexpected(Fail("reading the time span"));
  const bool minutes = sqlite3_column_type(s.get(), 0) != SQLITE_NULL;
  const bool hours = sqlite3_column_type(s.get(), 2) != SQLITE_NULL;
  if (!minutes && !hours) return std::optional<std::pair<int64_t, int64_t>>();
  int64_t first = INT64_MAX, last = INT64_MIN;
  if (minutes) first = s.Int(0) * 60, last = (s.Int(1) + 1) * 60;
  // An hour whose minutes are gone widens the span to the whole hour.
  if (hours && (!minutes || s.Int(2) < FloorDiv(s.Int(0), 60)))
    first = std::min(first, s.Int(2) * 3600);
  if (hours && (!minutes || s.Int(3) > FloorDiv(s.Int(1), 60)))
    last = std::max(last, (s.Int(3) + 1) * 3600);
  return std::optional<std::pair<int64_t, int64_t>>(std::pair{first, last});
}

Expected<std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>>>
Store::PodLabels() const {
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> out;
  Stmt s(db_, "SELECT namespace, pod, labels FROM pod_labels");
  if (!s.ok()) return tl::unexpected(Fail("reading pod labels"));
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    const auto j = nlohmann::json::parse(s.Text(2), nullptr, false);
    if (!j.is_object())
      continue;  // written by us as an object; anything else is skipped, not fatal
    auto& labels = out[{s.Text(0), s.Text(1)}];
    for (const auto& [k, v] : j.items())
      if (v.is_string()) labels[k] = v.get<std::string>();
  }
  if (rc != SQLITE_DONE) return tl::unexpected(Fail("reading pod labels"));
  return out;
}

std::string Store::HistoryName() const { return "store " + path_; }

Expected<const Store*> Store::HistoryReader() const {
  if (!history_reader_) {
    // Not the owner's connection: that one belongs to the owner's thread (NOMUTEX), and a read
    // transaction on it could take in, or commit, half of a write.
    auto opened = OpenReadOnly(path_);
    if (!opened) return tl::unexpected(opened.error());
    const std::string cache =
        "PRAGMA cache_size=-" + std::to_string(std::max(64, options_.cache_kib));
    if (auto r = (*opened)->Exec(cache.c_str()); !r) return tl::unexpected(r.error());
    history_reader_ = std::move(*opened);
  }
  return history_reader_.get();
}

Expected<std::optional<std::pair<int64_t, int64_t>>> Store::HistorySpan() const {
  std::lock_guard lock(history_mu_);
  auto reader = HistoryReader();
  if (!reader) return tl::unexpected(reader.error());
  return (*reader)->Span();
}

Expected<usage::PodLabelMap> Store::HistoryPodLabels() const {
  std::lock_guard lock(history_mu_);
  auto reader = HistoryReader();
  if (!reader) return tl::unexpected(reader.error());
  return (*reader)->PodLabels();
}

Expected<std::map<int64_t, std::vector<UnitRecord>>> Store::HistoryMinutes(int64_t from,
                                                                           int64_t to) const {
  std::lock_guard lock(history_mu_);
  auto reader = HistoryReader();
  if (!reader) return tl::unexpected(reader.error());
  return (*reader)->MinuteUsage(from, to);
}

void Store::HistoryDone() const {
  std::lock_guard lock(history_mu_);
  if (history_reader_) (void)history_reader_->ReleaseMemory();  // best effort: next run reads
}

Expected<usage::WindowUsage> Store::ReadWindow(int64_t from, int64_t to) const {
  usage::WindowUsage out;
  auto units = Usage(from, to);
  if (!units) return tl::unexpected(units.error());
  auto labels = PodLabels();
  if (!labels) return tl::unexpected(labels.error());
  out.units = std::move(*units);
  out.labels = std::move(*labels);
  return out;
}

Expected<usage::BucketUsage> Store::ReadBuckets(int64_t from, int64_t to, int64_t bucket_s) const {
  usage::BucketUsage out;
  auto buckets = BucketUsage(from, to, bucket_s);
  if (!buckets) return tl::unexpected(buckets.error());
  auto labels = PodLabels();
  if (!labels) return tl::unexpected(labels.error());
  out.buckets = std::move(*buckets);
  out.labels = std::move(*labels);
  return out;
}

// Every node the store recorded: a bill's matching keeps those of its lines' periods.
Expected<std::vector<NodeRecord>> Store::ReadNodes(int64_t, int64_t) const { return Nodes(); }

}  // namespace gpumeter::store
