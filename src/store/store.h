// The embedded usage store: SQLite on disk in WAL mode, one row per (unit, owner, minute) with
// the usage and the share held (so cost can be recomputed under any policy), per-unit capacity
// rows beside them, and hourly rollups: an hour is rolled up from its minutes by the first write
// of a later hour, in that write's transaction (data for an hour already rolled up, after a
// clock step back, goes into both). One transaction per
// interval: a process killed at any moment loses at most the interval being written, and the
// file is never left corrupt (WAL, synchronous=NORMAL). Versioned migrations
// (PRAGMA user_version). A locked, full or corrupt database is an error that names the file.
// Times are Unix seconds (UTC). Thread-compatible: one writer thread, or one reader; and besides,
// its usage::UsageHistorySource reads from one other thread (a connection of their own).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "core/attribution/attribute.h"
#include "core/attribution/usage_record.h"
#include "core/usage/usage_reader.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gpumeter::store {

// The records' vocabulary lives in the core, where rightsizing reads it too (usage_record.h).
using attribution::NodeRecord;
using attribution::OwnerAmounts;
using attribution::UnitKey;
using attribution::UnitRecord;

struct IntervalRecord {
  int64_t end_unix_s = 0;  // the interval is booked to the minute it ends in
  std::vector<UnitRecord> units;
  // Labels of the pods in `units`, by (namespace, pod); the latest seen is kept.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> pod_labels;
  // The node's cloud identity, when the agent knows it (its Node object was read): kept per
  // (name, provider ID, instance id) with the first and last interval it was seen in. Its seen
  // times are end_unix_s; the record's own are ignored.
  std::optional<NodeRecord> node = std::nullopt;
  // Written while the writer suspects its wall clock stepped (UsageRecorder): the rows are
  // marked (clock_suspect), so they can be told apart or deleted once the clock is known.
  bool clock_suspect = false;
};

// A wall-clock step the writer saw between two intervals: the end of the newest interval before
// it, the step (wall time moved less monotonic time moved, s), and the stepped end of the
// interval that showed it.
struct ClockStep {
  int64_t newest_before_unix_s = 0;
  int64_t step_s = 0;
  int64_t seen_unix_s = 0;
};

struct StoreOptions {
  int minute_retention_days = 14;  // minute rows older than this are deleted (hourly rows stay)
  int hour_retention_days = 400;
  // SQLite's page cache per connection of the agent's (the writer and the history reader), KiB.
  // A cache grows as it reads pages until this bound; SQLite's default (2 MiB each) read as a
  // slow climb in the agent's memory over days (measured by bench/soak.sh). Inserts touch the last
  // pages of a few B-trees and history reads scan in key order: neither needs more. Reports keep
  // the default.
  int cache_kib = 512;
};

class Store final : public usage::UsageReader {
 public:
  // Opens (creating when missing) and migrates. Errors: not a database, corrupt, locked, written
  // by a newer gpumeter, unwritable directory; each names `path`.
  static Expected<std::unique_ptr<Store>> Open(const std::string& path, StoreOptions options = {});
  // Opens an existing store for reading only (reports); kNotFound when the file is missing.
  static Expected<std::unique_ptr<Store>> OpenReadOnly(const std::string& path);
  ~Store() override;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Adds one interval in one transaction (nothing of it on error).
  Expected<void> Write(const IntervalRecord& record);
  // Deletes rows past retention, relative to `now_unix_s`, except those within retention of a
  // recorded clock step's newest earlier interval (each table's own retention, in whole hours).
  Expected<void> Prune(int64_t now_unix_s);
  // Records a wall-clock step, so that no later Prune deletes the rows within retention of
  // `step.newest_before_unix_s`, whatever the clock says then (kept in the file: a restarted
  // agent keeps to it). Once per newest interval: a second step of the same window is ignored.
  Expected<void> RecordClockStep(const ClockStep& step);
  // The clock steps recorded, oldest window first (none before schema 7).
  Expected<std::vector<ClockStep>> ClockSteps() const;
  // Frees the pages the owner's connection holds in its cache (up to StoreOptions::cache_kib):
  // called once a minute by the agent, so the cache holds what a minute's writes touch instead
  // of filling up to its bound as the file grows. Best effort: an error is returned.
  Expected<void> ReleaseMemory();

  // Usage per unit summed over [from, to) (Unix seconds, taken to whole minutes): whole hours
  // from the hourly rollups, the ragged ends from minute rows; a start where minutes were pruned
  // is taken back to its hour. Read in one transaction (one snapshot).
  Expected<std::vector<UnitRecord>> Usage(int64_t from_unix_s, int64_t to_unix_s) const;
  // Usage per unit and hour over [from, to): for charts over time. Key: hour start (Unix s).
  Expected<std::map<int64_t, std::vector<UnitRecord>>> HourlyUsage(int64_t from_unix_s,
                                                                   int64_t to_unix_s) const;
  // Usage per unit and minute over [from, to), keyed by minute start, from the minute rows wherever
  // they are kept; for hours whose minutes were pruned, per hour (keyed by the hour start: a
  // record's `seconds` says how long it covers). For usage histories (rightsizing): read a day at
  // a time, a month of minutes is large.
  Expected<std::map<int64_t, std::vector<UnitRecord>>> MinuteUsage(int64_t from_unix_s,
                                                                   int64_t to_unix_s) const;
  // Usage per unit per `bucket_s` seconds (a multiple of 60) over [from, to), keyed by bucket
  // start: for charts over time at any resolution (hours whose minutes were pruned stay whole).
  Expected<std::map<int64_t, std::vector<UnitRecord>>> BucketUsage(int64_t from_unix_s,
                                                                   int64_t to_unix_s,
                                                                   int64_t bucket_s) const;
  // The first and last minute with data (Unix seconds); nullopt when empty.
  Expected<std::optional<std::pair<int64_t, int64_t>>> Span() const;
  Expected<std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>>>
  PodLabels() const;

  // Every node recorded (schema 4 on; an older store has none), by name then first seen.
  Expected<std::vector<NodeRecord>> Nodes() const;

  const std::string& path() const { return path_; }

 private:
  // usage::UsageHistorySource, used through that interface only: Span, PodLabels and
  // MinuteUsage as above, but on a read-only connection of their own (opened on first use, kept),
  // so that a thread other than the owner's (the agent's RightsizeRunner) may call them while the
  // owner writes: the owner's connection is for one thread at a time (SQLITE_OPEN_NOMUTEX), and in
  // WAL mode a reader and the writer go on side by side, as two processes would. Serialized among
  // themselves by history_mu_.
  std::string HistoryName() const override;
  Expected<std::optional<std::pair<int64_t, int64_t>>> HistorySpan() const override;
  Expected<usage::PodLabelMap> HistoryPodLabels() const override;
  Expected<std::map<int64_t, std::vector<UnitRecord>>> HistoryMinutes(
      int64_t from_unix_s, int64_t to_unix_s) const override;
  void HistoryDone() const override;  // the history connection's page cache released
  // The rest of usage::UsageReader, on the owner's connection (the owner's thread): Usage,
  // BucketUsage and Nodes as above, each with PodLabels. The span is the whole store's, usage is
  // booked to minutes, and reads over time are cheap.
  bool SpanIsWhole() const override { return true; }
  int64_t BookedSeconds() const override { return 60; }
  bool ReadsOverTime() const override { return true; }
  Expected<usage::WindowUsage> ReadWindow(int64_t from_unix_s, int64_t to_unix_s) const override;
  Expected<usage::BucketUsage> ReadBuckets(int64_t from_unix_s, int64_t to_unix_s,
                                           int64_t bucket_s) const override;
  Expected<std::vector<NodeRecord>> ReadNodes(int64_t from_unix_s,
                                              int64_t to_unix_s) const override;
  // The history connection, opened when missing (a failed open is retried next time). Call with
  // history_mu_ held.
  Expected<const Store*> HistoryReader() const;

  Store(std::string path, StoreOptions options);
  Expected<void> Exec(const char* sql) const;
  Expected<void> Migrate();
  Expected<int64_t> UnitId(const UnitKey& key);
  Expected<void> WriteNode(const NodeRecord& node, int64_t seen_unix_s);  // in Write's transaction
  Expected<int64_t> OwnerId(const domain::Owner& owner);
  Error Fail(const std::string& what) const;  // the error of the last call, naming the file
  // Sums over [from, to) per unit, per `bucket_s` seconds (keyed by bucket start; 0: everything
  // under key 0). A bucket shorter than an hour still holds whole hours where only rollups remain.
  Expected<std::map<int64_t, std::vector<UnitRecord>>> Query(int64_t from_unix_s, int64_t to_unix_s,
                                                             int64_t bucket_s) const;
  Expected<std::map<int64_t, std::vector<UnitRecord>>> QuerySnapshot(int64_t from_unix_s,
                                                                     int64_t to_unix_s,
                                                                     int64_t bucket_s) const;

  // Rolls the minutes of hours in [rolled_up_to_hour_, hour) into hourly rows.
  Expected<void> RollUpBefore(int64_t hour);
  Expected<int64_t> ReadRolledUpTo() const;

  std::string path_;
  StoreOptions options_;
  sqlite3* db_ = nullptr;
  struct Statements;  // prepared once, finalized with the store
  std::unique_ptr<Statements> stmts_;
  int64_t rolled_up_to_hour_ = 0;  // hours before this one are in the hourly tables
  int64_t schema_version_ = 0;     // what the file holds: a reader opens older ones read-only
  // Ids of rows in `units` and `owners` (a cache, cleared when it grows large: pods churn); the
  // keys added by the open transaction, to forget if it rolls back.
  std::map<UnitKey, int64_t> unit_ids_;
  std::map<domain::Owner, int64_t> owner_ids_;
  std::vector<UnitKey> new_units_;
  std::vector<domain::Owner> new_owners_;
  mutable std::mutex history_mu_;                  // guards history_reader_ and its use
  mutable std::unique_ptr<Store> history_reader_;  // UsageHistorySource reads; owned
};

}  // namespace gpumeter::store
