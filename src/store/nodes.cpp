// The store's nodes table (schema 4): each node's cloud identity and the span it was seen in.
#include <sqlite3.h>

#include "store/stmt.h"
#include "store/store.h"

namespace gpumeter::store {

Expected<void> Store::WriteNode(const NodeRecord& n, int64_t seen_unix_s) {
  // Per interval, so a prepared statement would save little: an agent writes one a second.
  Stmt s(db_,
         "INSERT INTO nodes VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?9) ON CONFLICT DO UPDATE SET "
         "instance_type = excluded.instance_type, "
         "region = excluded.region, zone = excluded.zone, capacity_type = excluded.capacity_type, "
         "gpu_count = excluded.gpu_count, first_seen = MIN(first_seen, excluded.first_seen), "
         "last_seen = MAX(last_seen, excluded.last_seen)");
  bool ok = s.ok() && s.Bind(1, n.name) && s.Bind(2, n.provider_id) && s.Bind(3, n.instance_id) &&
            s.Bind(4, n.instance_type) && s.Bind(5, n.region) && s.Bind(6, n.zone) &&
            s.Bind(7, n.capacity_type) && s.Bind(9, seen_unix_s);
  if (ok)
    ok =
        n.gpu_count ? s.Bind(8, int64_t{*n.gpu_count}) : sqlite3_bind_null(s.get(), 8) == SQLITE_OK;
  if (!ok || s.Step() != SQLITE_DONE) return tl::unexpected(Fail("writing node " + n.name));
  return {};
}

Expected<std::vector<NodeRecord>> Store::Nodes() const {
  std::vector<NodeRecord> out;
  if (schema_version_ < 4) return out;  // recorded no node
  Stmt s(db_,
         "SELECT name, provider_id, instance_id, instance_type, region, zone, capacity_type, "
         "gpu_count, first_seen, last_seen FROM nodes ORDER BY name, first_seen, provider_id");
  if (!s.ok()) return tl::unexpected(Fail("reading nodes"));
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    NodeRecord n;
    n.name = s.Text(0);
    n.provider_id = s.Text(1);
    n.instance_id = s.Text(2);
    n.instance_type = s.Text(3);
    n.region = s.Text(4);
    n.zone = s.Text(5);
    n.capacity_type = s.Text(6);
    if (sqlite3_column_type(s.get(), 7) != SQLITE_NULL) {
      const int64_t gpus = s.Int(7);
      if (gpus > 0 && gpus <= 1024) n.gpu_count = static_cast<int>(gpus);  // else: not known
    }
    n.first_seen_unix_s = s.Int(8);
    n.last_seen_unix_s = s.Int(9);
    out.push_back(std::move(n));
  }
  if (rc != SQLITE_DONE) return tl::unexpected(Fail("reading nodes"));
  return out;
}

}  // namespace gpumeter::store
