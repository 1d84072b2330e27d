#include "sources/pods/pods.h"

#include <nlohmann/json.hpp>

#include "common/json/strict_parse.h"

namespace gpumeter::k8s {
namespace {

using nlohmann::json;

// Reads an optional string member; a present member of another type is an error.
Expected<std::string> Str(const json& obj, const char* key, const std::string& where,
                          bool required) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return MakeError(ErrorCode::kInvalidInput, where + "." + key + ": missing");
    return std::string();
  }
  if (!it->is_string())
    return MakeError(ErrorCode::kInvalidInput, where + "." + key + ": not a string");
  return it->get<std::string>();
}

Expected<std::map<std::string, std::string>> StrMap(const json& obj, const char* key,
                                                    const std::string& where) {
  std::map<std::string, std::string> out;
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (!it->is_object())
    return MakeError(ErrorCode::kInvalidInput, where + "." + key + ": not an object");
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string())
      return MakeError(ErrorCode::kInvalidInput, where + "." + key + "." + k + ": not a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

// A string member, or `fallback` when it is missing or not a string (for messages and versions).
std::string StrOr(const json& obj, const char* key, const std::string& fallback = "") {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

const json& Member(const json& obj, const char* key) {
  static const json kEmpty = json::object();
  const auto it = obj.find(key);
  return it == obj.end() || !it->is_object() ? kEmpty : *it;
}

Expected<void> Containers(const json& spec, const json& status, const char* spec_key,
                          const char* status_key, bool init, PodInfo& pod) {
  const auto it = spec.find(spec_key);
  if (it == spec.end() || it->is_null()) return {};
  if (!it->is_array())
    return MakeError(ErrorCode::kInvalidInput, std::string("spec.") + spec_key + ": not an array");
  std::map<std::string, std::string> ids;  // container name -> "<runtime>://<id>"
  if (const auto st = status.find(status_key); st != status.end() && st->is_array())
    for (const auto& cs : *st)
      if (cs.is_object() && cs.contains("name") && cs["name"].is_string() &&
          cs.contains("containerID") && cs["containerID"].is_string())
        ids[cs["name"].get<std::string>()] = cs["containerID"].get<std::string>();
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& c = (*it)[i];
    const std::string where = std::string("spec.") + spec_key + "[" + std::to_string(i) + "]";
    if (!c.is_object()) return MakeError(ErrorCode::kInvalidInput, where + ": not an object");
    auto name = Str(c, "name", where, true);
    if (!name) return tl::unexpected(name.error());
    PodContainer pc;
    pc.name = *name;
    pc.init = init;
    const auto& res = Member(c, "resources");
    auto limits = StrMap(res, "limits", where + ".resources");
    auto requests = StrMap(res, "requests", where + ".resources");
    if (!limits) return tl::unexpected(limits.error());
    if (!requests) return tl::unexpected(requests.error());
    pc.requests = *limits;
    for (auto& [k, v] : *requests) pc.requests[k] = v;
    if (auto id = ids.find(pc.name); id != ids.end()) {
      const auto sep = id->second.find("://");
      if (sep != std::string::npos && sep + 3 < id->second.size()) {
        pc.runtime = id->second.substr(0, sep);
        pc.container_id = id->second.substr(sep + 3);
      }
    }
    pod.containers.push_back(std::move(pc));
  }
  return {};
}

Expected<PodInfo> FromJson(const json& j) {
  if (!j.is_object()) return MakeError(ErrorCode::kInvalidInput, "pod: not an object");
  const auto& meta = Member(j, "metadata");
  const auto& spec = Member(j, "spec");
  const auto& status = Member(j, "status");
  PodInfo pod;
  auto uid = Str(meta, "uid", "metadata", true);
  auto ns = Str(meta, "namespace", "metadata", true);
  auto name = Str(meta, "name", "metadata", true);
  auto node = Str(spec, "nodeName", "spec", false);
  auto phase = Str(status, "phase", "status", false);
  auto qos = Str(status, "qosClass", "status", false);
  auto labels = StrMap(meta, "labels", "metadata");
  auto annotations = StrMap(meta, "annotations", "metadata");
  for (const Error* e :
       {uid ? nullptr : &uid.error(), ns ? nullptr : &ns.error(), name ? nullptr : &name.error(),
        node ? nullptr : &node.error(), phase ? nullptr : &phase.error(),
        qos ? nullptr : &qos.error(), labels ? nullptr : &labels.error(),
        annotations ? nullptr : &annotations.error()})
    if (e) return tl::unexpected(*e);
  pod.uid = *uid, pod.ns = *ns, pod.name = *name, pod.node_name = *node, pod.phase = *phase,
  pod.qos = *qos;
  pod.labels = std::move(*labels);
  pod.annotations = std::move(*annotations);
  for (const char* key : {"kubernetes.io/config.mirror", "kubernetes.io/config.hash"})
    if (auto it = pod.annotations.find(key); it != pod.annotations.end() && !pod.config_hash)
      pod.config_hash = it->second;
  if (auto r = Containers(spec, status, "initContainers", "initContainerStatuses", true, pod); !r)
    return tl::unexpected(r.error());
  if (auto r = Containers(spec, status, "containers", "containerStatuses", false, pod); !r)
    return tl::unexpected(r.error());
  if (const auto claims = spec.find("resourceClaims"); claims != spec.end() && claims->is_array())
    pod.resource_claims = !claims->empty();
  return pod;
}

// Duplicate keys refused (a pod with two uids, or two values for one label, is malformed, not a
// choice to make); 64 levels is far deeper than any pod, managedFields included.
Expected<json> ParseJson(std::string_view text, const char* what) {
  return json_strict::Parse(text, what, 64);
}

std::string PodName(const json& j) {
  const auto& meta = Member(j, "metadata");
  return StrOr(meta, "namespace", "?") + "/" + StrOr(meta, "name", "?");
}

}  // namespace

Expected<PodInfo> ParsePod(std::string_view text) {
  auto j = ParseJson(text, "pod");
  if (!j) return tl::unexpected(j.error());
  return FromJson(*j);
}

Expected<void> PodStore::ApplyList(std::string_view body) {
  auto j = ParseJson(body, "PodList");
  if (!j) return tl::unexpected(j.error());
  if (!j->is_object() || !j->contains("items") || !(*j)["items"].is_array())
    return MakeError(ErrorCode::kInvalidInput, "PodList: no items array");
  // Parse everything first: a bad item leaves the current set untouched.
  std::vector<PodInfo> pods;
  for (size_t i = 0; i < (*j)["items"].size(); ++i) {
    auto pod = FromJson((*j)["items"][i]);
    if (!pod)
      return MakeError(ErrorCode::kInvalidInput, "PodList items[" + std::to_string(i) + "] (" +
                                                     PodName((*j)["items"][i]) +
                                                     "): " + pod.error().message);
    pods.push_back(std::move(*pod));
  }
  by_uid_.clear();
  uid_by_hash_.clear();
  uid_by_name_.clear();
  for (auto& p : pods) Put(std::move(p));
  resource_version_ = StrOr(Member(*j, "metadata"), "resourceVersion");
  return {};
}

Expected<PodStore::Event> PodStore::ApplyWatchLine(std::string_view line) {
  auto j = ParseJson(line, "watch event");
  if (!j) return tl::unexpected(j.error());
  if (!j->is_object() || !j->contains("type") || !(*j)["type"].is_string() ||
      !j->contains("object") || !(*j)["object"].is_object())
    return MakeError(ErrorCode::kInvalidInput,
                     "watch event: needs a string 'type' and an 'object'");
  const std::string type = (*j)["type"].get<std::string>();
  const auto& object = (*j)["object"];
  if (type == "ERROR") {
    const auto code = object.find("code");
    if (code != object.end() && code->is_number_integer() && code->get<int>() == 410)
      return Event::kRelist;
    return MakeError(ErrorCode::kUnavailable,
                     "watch ERROR " + (code != object.end() ? code->dump() : std::string("?")) +
                         ": " + StrOr(object, "message"));
  }
  const std::string rv = StrOr(Member(object, "metadata"), "resourceVersion");
  if (type == "BOOKMARK") {
    if (!rv.empty()) resource_version_ = rv;
    return Event::kBookmark;
  }
  Event event;
  if (type == "ADDED")
    event = Event::kAdded;
  else if (type == "MODIFIED")
    event = Event::kModified;
  else if (type == "DELETED")
    event = Event::kDeleted;
  else
    return MakeError(ErrorCode::kInvalidInput, "watch event: unknown type '" + type + "'");
  auto pod = FromJson(object);
  if (!pod)
    return MakeError(ErrorCode::kInvalidInput,
                     "watch " + type + " " + PodName(object) + ": " + pod.error().message);
  if (event == Event::kDeleted)
    Erase(pod->uid);
  else
    Put(std::move(*pod));
  if (!rv.empty()) resource_version_ = rv;
  return event;
}

void PodStore::Put(PodInfo pod) {
  Erase(pod.uid);
  if (pod.config_hash) uid_by_hash_[*pod.config_hash] = pod.uid;
  uid_by_name_[{pod.ns, pod.name}] = pod.uid;
  const std::string uid = pod.uid;
  by_uid_[uid] = std::move(pod);
}

void PodStore::Erase(const std::string& uid) {
  const auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return;
  if (it->second.config_hash) uid_by_hash_.erase(*it->second.config_hash);
  if (auto n = uid_by_name_.find({it->second.ns, it->second.name});
      n != uid_by_name_.end() && n->second == uid)
    uid_by_name_.erase(n);
  by_uid_.erase(it);
}

const PodInfo* PodStore::ByUid(const std::string& uid) const {
  if (auto it = by_uid_.find(uid); it != by_uid_.end()) return &it->second;
  if (auto h = uid_by_hash_.find(uid); h != uid_by_hash_.end())
    if (auto it = by_uid_.find(h->second); it != by_uid_.end()) return &it->second;
  return nullptr;
}

const PodContainer* PodStore::ByContainerId(const std::string& id, const PodInfo** pod) const {
  for (const auto& [uid, p] : by_uid_)
    for (const auto& c : p.containers)
      if (c.container_id == id) {
        if (pod) *pod = &p;
        return &c;
      }
  return nullptr;
}

const PodInfo* PodStore::ByName(const std::string& ns, const std::string& name) const {
  const auto it = uid_by_name_.find({ns, name});
  return it == uid_by_name_.end() ? nullptr : ByUid(it->second);
}

}  // namespace gpumeter::k8s
