#include "sources/slices/resource_slices.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace gpumeter::k8s {
namespace {

using nlohmann::json;

// A DeviceAttribute's string value ({"string": "…"}); other kinds are not what we need.
std::optional<std::string> StringAttr(const json& attrs, const char* key) {
  if (!attrs.is_object()) return std::nullopt;
  auto it = attrs.find(key);
  if (it == attrs.end() || !it->is_object()) return std::nullopt;
  auto s = it->find("string");
  if (s == it->end() || !s->is_string()) return std::nullopt;
  return s->get<std::string>();
}

}  // namespace

Expected<void> ResourceSliceStore::ApplyList(std::string_view body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return MakeError(ErrorCode::kInvalidInput, "ResourceSliceList: not valid JSON");
  const auto items = doc.find("items");
  if (items == doc.end() || !items->is_array())
    return MakeError(ErrorCode::kInvalidInput, "ResourceSliceList: no items array");
  // Newest generation per (driver, pool) first, then the devices of those slices only.
  std::map<std::pair<std::string, std::string>, int64_t> newest;
  for (size_t i = 0; i < items->size(); ++i) {
    if (!(*items)[i].is_object())
      return MakeError(ErrorCode::kInvalidInput,
                       "ResourceSliceList items[" + std::to_string(i) + "]: not an object");
    const auto& spec = (*items)[i].value("spec", json::object());
    const auto where = "ResourceSliceList items[" + std::to_string(i) + "].spec";
    if (!spec.is_object() || !spec.contains("driver") || !spec["driver"].is_string())
      return MakeError(ErrorCode::kInvalidInput, where + ".driver: missing or not a string");
    const auto& pool = spec.value("pool", json::object());
    if (!pool.is_object() || !pool.contains("name") || !pool["name"].is_string())
      return MakeError(ErrorCode::kInvalidInput, where + ".pool.name: missing or not a string");
    if (pool.contains("generation") && !pool["generation"].is_number_integer())
      return MakeError(ErrorCode::kInvalidInput, where + ".pool.generation: not an integer");
    const auto key = std::pair{spec["driver"].get<std::string>(), pool["name"].get<std::string>()};
    const int64_t gen = pool.value("generation", int64_t{0});
    auto [it, inserted] = newest.emplace(key, gen);
    if (!inserted && gen > it->second) it->second = gen;
  }
  std::map<DraKey, DraDevice> out;
  for (size_t i = 0; i < items->size(); ++i) {
    const auto& spec = (*items)[i]["spec"];
    const std::string driver = spec["driver"], pool = spec["pool"]["name"];
    if (spec["pool"].value("generation", int64_t{0}) != newest[{driver, pool}]) continue;
    const auto devices = spec.value("devices", json::array());
    if (!devices.is_array())
      return MakeError(ErrorCode::kInvalidInput, "ResourceSliceList items[" + std::to_string(i) +
                                                     "].spec.devices: not an array");
    for (size_t j = 0; j < devices.size(); ++j) {
      const auto& d = devices[j];
      if (!d.is_object() || !d.contains("name") || !d["name"].is_string())
        return MakeError(ErrorCode::kInvalidInput, "ResourceSliceList items[" + std::to_string(i) +
                                                       "].spec.devices[" + std::to_string(j) +
                                                       "].name: missing or not a string");
      DraDevice dev;
      dev.driver = driver, dev.pool = pool, dev.device = d["name"];
      const auto attrs = d.value("attributes", json::object());
      dev.type = StringAttr(attrs, "type").value_or("");
      dev.uuid = StringAttr(attrs, "uuid");
      dev.parent_uuid = StringAttr(attrs, "parentUUID");
      dev.profile = StringAttr(attrs, "profile");
      out[{driver, pool, dev.device}] = std::move(dev);
    }
  }
  devices_ = std::move(out);
  return {};
}

const DraDevice* ResourceSliceStore::Find(const std::string& driver, const std::string& pool,
                                          const std::string& device) const {
  const auto it = devices_.find({driver, pool, device});
  return it == devices_.end() ? nullptr : &it->second;
}

}  // namespace gpumeter::k8s
