#include "sources/history/prometheus_reply.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/excerpt.h"
#include "sources/history/prometheus_matrix_reader.h"

namespace gpumeter::history {
namespace {

using nlohmann::json;

// The deepest nesting of arrays and objects, counted outside strings; stops early past `limit`.
// Checked before parsing so a hostile reply cannot make the parser build a huge tree.
int NestingDepth(std::string_view s, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : s) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if (c == ']' || c == '}') --depth;
    if (deepest > limit) break;
  }
  return deepest;
}

Error Bad(const std::string& what, const std::string& field, const std::string& why) {
  return Error{ErrorCode::kUnavailable, what + ": " + field + ": " + why};
}

std::string Found(const json& j) {
  return Excerpt(j.dump(-1, ' ', false, json::error_handler_t::replace));
}

// A sample value as Prometheus writes it: a string holding a float ("1.5", "+Inf", "NaN").
// `field` names the value, called only for an error.
template <typename Name>
Expected<double> ParseValue(const json& v, const std::string& what, const Name& field) {
  if (!v.is_string())
    return tl::unexpected(Bad(what, field(), "expected a string, found " + Found(v)));
  const auto& s = v.get_ref<const std::string&>();
  const auto x = SampleNumber(s);
  if (!x) return tl::unexpected(Bad(what, field(), "'" + Excerpt(s) + "' is not a number"));
  if (!UsableSample(*x))
    return tl::unexpected(Bad(what, field(), "'" + Excerpt(s) + "' is not a finite number >= 0"));
  return *x;
}

// The "metric" object of a result entry: label names to string values.
Expected<std::map<std::string, std::string>> ParseLabels(const json& item, const std::string& what,
                                                         const std::string& field) {
  std::map<std::string, std::string> out;
  const auto metric = item.find("metric");
  if (metric == item.end() || !metric->is_object())
    return tl::unexpected(Bad(what, field + ".metric", "missing or not an object"));
  for (const auto& [k, v] : metric->items()) {
    if (!v.is_string())
      return tl::unexpected(
          Bad(what, field + ".metric." + Excerpt(k, 60), "expected a string, found " + Found(v)));
    out[k] = v.get<std::string>();
  }
  return out;
}

Expected<PromSample> ParseSample(const json& item, const std::string& what,
                                 const std::string& field) {
  if (!item.is_object())
    return tl::unexpected(Bad(what, field, "expected an object, found " + Found(item)));
  PromSample out;
  auto labels = ParseLabels(item, what, field);
  if (!labels) return tl::unexpected(labels.error());
  out.labels = std::move(*labels);
  const auto value = item.find("value");
  if (value == item.end() || !value->is_array() || value->size() != 2 || !(*value)[0].is_number())
    return tl::unexpected(Bad(
        what, field + ".value",
        "expected [time, \"value\"], found " + (value == item.end() ? "nothing" : Found(*value))));
  auto v = ParseValue((*value)[1], what, [&] { return field + ".value[1]"; });
  if (!v) return tl::unexpected(v.error());
  out.value = *v;
  return out;
}

// The error a {"status":"error"} reply (or a non-200 one) carries.
Error ErrorReply(const json& body, std::string_view raw, int status, const std::string& what) {
  std::string why;
  if (body.is_object() && body.contains("error") && body["error"].is_string())
    why = (body.contains("errorType") && body["errorType"].is_string()
               ? body["errorType"].get<std::string>() + ": "
               : std::string()) +
          Excerpt(body["error"].get<std::string>());
  else
    why = "'" + Excerpt(raw) + "'";
  return Error{ErrorCode::kUnavailable, what + ": HTTP " + std::to_string(status) + ": " + why};
}

// The checks every reply shares: size, nesting, JSON, status, data.resultType == `type`; gives
// data.result, an array of at most limits.max_series entries. The parsed document is kept in
// `doc` (the result points into it).
Expected<const json*> ResultOf(std::string_view body, int status, const std::string& what,
                               const ReplyLimits& limits, const char* type, json& doc) {
  if (body.size() > limits.max_bytes)
    return MakeError(ErrorCode::kUnavailable, what + ": reply of " + std::to_string(body.size()) +
                                                  " bytes, over the cap of " +
                                                  std::to_string(limits.max_bytes));
  if (NestingDepth(body, limits.max_depth) > limits.max_depth)
    return MakeError(ErrorCode::kUnavailable, what + ": reply nested deeper than " +
                                                  std::to_string(limits.max_depth) + " levels");
  doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  const json& j = doc;
  if (j.is_discarded()) {
    if (status != 200) return tl::unexpected(ErrorReply(j, body, status, what));
    return MakeError(ErrorCode::kUnavailable,
                     what + ": HTTP 200, reply is not JSON: '" + Excerpt(body) + "'");
  }
  if (status != 200 || !j.is_object() || !j.contains("status") || j["status"] != "success")
    return tl::unexpected(ErrorReply(j, body, status, what));
  const auto data = j.find("data");
  if (data == j.end() || !data->is_object())
    return tl::unexpected(Bad(what, "data", "missing or not an object"));
  const auto rtype = data->find("resultType");
  if (rtype == data->end() || *rtype != type)
    return tl::unexpected(Bad(what, "data.resultType",
                              std::string("expected \"") + type + "\", found " +
                                  (rtype == data->end() ? "nothing" : Found(*rtype))));
  const auto result = data->find("result");
  if (result == data->end() || !result->is_array())
    return tl::unexpected(
        Bad(what, "data.result",
            "expected an array, found " + (result == data->end() ? "nothing" : Found(*result))));
  if (result->size() > limits.max_series)
    return tl::unexpected(Bad(what, "data.result",
                              std::to_string(result->size()) + " series, over the cap of " +
                                  std::to_string(limits.max_series)));
  return &*result;
}

// A point's time: a number of seconds, finite and within Unix time as a 64-bit count of ms.
// `point` names the point ("data.result[0].values[3]"), called only for an error.
template <typename Name>
Expected<int64_t> ParseTime(const json& t, const std::string& what, const Name& point) {
  if (!t.is_number())
    return tl::unexpected(
        Bad(what, point() + "[0]", "expected a time in seconds, found " + Found(t)));
  const auto ms = SampleTimeMs(t.get<double>());
  if (!ms)
    return tl::unexpected(Bad(what, point() + "[0]", "time " + Found(t) + " is out of range"));
  return *ms;
}

Expected<PromSeries> ParseSeries(const json& item, const std::string& what,
                                 const std::string& field, size_t max_points) {
  if (!item.is_object())
    return tl::unexpected(Bad(what, field, "expected an object, found " + Found(item)));
  PromSeries out;
  auto labels = ParseLabels(item, what, field);
  if (!labels) return tl::unexpected(labels.error());
  out.labels = std::move(*labels);
  const auto values = item.find("values");
  if (values == item.end() || !values->is_array())
    return tl::unexpected(Bad(what, field + ".values", "missing or not an array"));
  if (values->size() > max_points)
    return tl::unexpected(Bad(
        what, field + ".values",
        std::to_string(values->size()) + " points, over the cap of " + std::to_string(max_points)));
  out.points.reserve(values->size());
  for (size_t i = 0; i < values->size(); ++i) {
    const auto& p = (*values)[i];
    // The field's name only for an error: a reply holds millions of points.
    const auto f = [&] { return field + ".values[" + std::to_string(i) + "]"; };
    if (!p.is_array() || p.size() != 2)
      return tl::unexpected(Bad(what, f(), "expected [time, \"value\"], found " + Found(p)));
    auto t = ParseTime(p[0], what, f);
    if (!t) return tl::unexpected(t.error());
    if (!out.points.empty() && *t <= out.points.back().first)
      return tl::unexpected(Bad(what, f() + "[0]", "times must increase"));
    auto v = ParseValue(p[1], what, [&] { return f() + "[1]"; });
    if (!v) return tl::unexpected(v.error());
    out.points.emplace_back(*t, *v);
  }
  return out;
}

}  // namespace

Expected<std::vector<PromSample>> ParseVectorReply(std::string_view body, int status,
                                                   const std::string& what,
                                                   const ReplyLimits& limits) {
  json doc;
  auto result = ResultOf(body, status, what, limits, "vector", doc);
  if (!result) return tl::unexpected(result.error());
  const json& r = **result;
  std::vector<PromSample> out;
  out.reserve(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    auto s = ParseSample(r[i], what, "data.result[" + std::to_string(i) + "]");
    if (!s) return tl::unexpected(s.error());
    out.push_back(std::move(*s));
  }
  return out;
}

Expected<std::vector<PromSeries>> ParseMatrixReply(std::string_view body, int status,
                                                   const std::string& what,
                                                   const ReplyLimits& limits) {
  if (status == 200)
    if (auto good = ReadGoodMatrix(body, limits)) return std::move(*good);
  // Not a good reply: parsed as a document, to say what is wrong with it.
  return ParseMatrixDocument(body, status, what, limits);
}

Expected<std::vector<PromSeries>> ParseMatrixDocument(std::string_view body, int status,
                                                      const std::string& what,
                                                      const ReplyLimits& limits) {
  json doc;
  auto result = ResultOf(body, status, what, limits, "matrix", doc);
  if (!result) return tl::unexpected(result.error());
  const json& r = **result;
  std::vector<PromSeries> out;
  out.reserve(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    auto s = ParseSeries(r[i], what, "data.result[" + std::to_string(i) + "]", limits.max_points);
    if (!s) return tl::unexpected(s.error());
    out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace gpumeter::history
