#include "sources/history/prometheus_matrix_reader.h"

#include <charconv>
#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace gpumeter::history {
namespace {

using nlohmann::json;

// A SAX handler: each callback returns false (stop: not a good reply) on anything the document
// path would refuse or read differently, so the caller falls back to it.
class MatrixReader {
 public:
  explicit MatrixReader(const ReplyLimits& limits) : limits_(limits) {}

  bool null() { return skip_ > 0 || Ignored(); }
  bool boolean(bool) { return skip_ > 0 || Ignored(); }
  bool number_integer(json::number_integer_t v) { return Number(static_cast<double>(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Number(static_cast<double>(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return Number(v); }
  bool binary(json::binary_t&) { return false; }

  bool string(json::string_t& v) {
    if (skip_ > 0) return true;
    switch (In()) {
      case kTop:
        if (key_ == "status") return v == "success" && Once(kStatusKey);
        return Ignored();
      case kData:
        if (key_ == "resultType") return v == "matrix" && Once(kResultTypeKey);
        return Ignored();
      case kSeries:
        return Ignored();
      case kMetric:
        return series_.back().labels.emplace(std::move(key_), std::move(v)).second;
      case kPoint: {
        if (point_fields_++ != 1) return false;
        const auto x = SampleNumber(v);
        if (!x || !UsableSample(*x)) return false;
        series_.back().points.emplace_back(time_ms_, *x);
        return true;
      }
      default:
        return false;
    }
  }

  bool key(json::string_t& k) {
    if (skip_ > 0) return true;
    key_ = std::move(k);
    return true;
  }

  bool start_object(std::size_t) {
    if (skip_ > 0) return Deeper();
    switch (In()) {
      case kNone:
        return top_keys_ == 0 && Push(kTop);
      case kTop:
        return key_ == "data" ? Once(kDataKey) && Push(kData) : Skip();
      case kData:
        return key_ == "result" ? false : Skip();
      case kResult:
        if (series_.size() >= limits_.max_series) return false;
        series_.emplace_back();
        series_keys_ = 0;
        return Push(kSeries);
      case kSeries:
        return key_ == "metric" ? SeriesOnce(kMetricSeen) && Push(kMetric) : Skip();
      default:
        return false;
    }
  }

  bool end_object() {
    if (skip_ > 0) return Shallower();
    if (In() == kSeries && series_keys_ != (kMetricSeen | kValuesSeen)) return false;
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) {
    if (skip_ > 0) return Deeper();
    switch (In()) {
      case kTop:
        return key_ == "status" || key_ == "data" ? false : Skip();
      case kData:
        return key_ == "result" ? Once(kResultKey) && Push(kResult)
                                : (key_ == "resultType" ? false : Skip());
      case kSeries:
        return key_ == "values" ? SeriesOnce(kValuesSeen) && Push(kValues)
                                : (key_ == "metric" ? false : Skip());
      case kValues:
        if (series_.back().points.size() >= limits_.max_points) return false;
        point_fields_ = 0;
        return Push(kPoint);
      default:
        return false;
    }
  }

  bool end_array() {
    if (skip_ > 0) return Shallower();
    if (In() == kPoint && point_fields_ != 2) return false;
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

  // The whole reply was read: it had a status, a result type and a result.
  bool Complete() const {
    return top_keys_ == (kStatusKey | kDataKey | kResultTypeKey | kResultKey);
  }
  std::vector<PromSeries> Take() { return std::move(series_); }

 private:
  enum Where { kNone, kTop, kData, kResult, kSeries, kMetric, kValues, kPoint };
  // Keys seen once (a second is refused: the document path would keep the last).
  enum TopKey { kStatusKey = 1, kDataKey = 2, kResultTypeKey = 4, kResultKey = 8 };
  enum SeriesKey { kMetricSeen = 1, kValuesSeen = 2 };

  Where In() const { return stack_.empty() ? kNone : stack_.back(); }  // kNone: the top level
  bool Push(Where w) {
    if (stack_.size() >= static_cast<size_t>(limits_.max_depth)) return false;
    stack_.push_back(w);
    return true;
  }
  bool Once(int bit) {
    if (top_keys_ & bit) return false;
    top_keys_ |= bit;
    return true;
  }
  bool SeriesOnce(int bit) {
    if (series_keys_ & bit) return false;
    series_keys_ |= bit;
    return true;
  }
  // A scalar where one is allowed and not read: under a key of the top, data or series object
  // that the document path ignores too. The keys it reads must have their types.
  bool Ignored() const {
    switch (In()) {
      case kTop:
        return key_ != "status" && key_ != "data";
      case kData:
        return key_ != "resultType" && key_ != "result";
      case kSeries:
        return key_ != "metric" && key_ != "values";
      default:
        return false;
    }
  }
  bool Number(double seconds) {
    if (skip_ > 0) return true;
    if (In() != kPoint) return Ignored();
    if (point_fields_++ != 0) return false;
    const auto t = SampleTimeMs(seconds);
    const auto& points = series_.back().points;
    if (!t || (!points.empty() && *t <= points.back().first)) return false;
    time_ms_ = *t;
    return true;
  }
  // An object or array under an ignored key: read over, as deep as the limit allows.
  bool Skip() {
    skip_ = 1;
    return stack_.size() + 1 <= static_cast<size_t>(limits_.max_depth);
  }
  bool Deeper() {
    return stack_.size() + static_cast<size_t>(++skip_) <= static_cast<size_t>(limits_.max_depth);
  }
  bool Shallower() {
    --skip_;
    return true;
  }

  const ReplyLimits& limits_;
  std::vector<Where> stack_;
  std::string key_;
  int skip_ = 0;  // depth inside an ignored value
  int top_keys_ = 0, series_keys_ = 0;
  int point_fields_ = 0;
  int64_t time_ms_ = 0;
  std::vector<PromSeries> series_;
};

}  // namespace

std::optional<double> SampleNumber(std::string_view s) {
  double x = 0;
  // from_chars refuses a leading '+', which Prometheus writes for +Inf.
  const char* begin = s.data() + (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+');
  const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), x);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return x;
}

bool UsableSample(double x) { return std::isfinite(x) && x >= 0; }

std::optional<int64_t> SampleTimeMs(double x) {
  if (!std::isfinite(x) || x < 0 || x > 1e11) return std::nullopt;
  return static_cast<int64_t>(std::llround(x * 1000));
}

std::optional<std::vector<PromSeries>> ReadGoodMatrix(std::string_view body,
                                                      const ReplyLimits& limits) {
  if (body.size() > limits.max_bytes) return std::nullopt;
  MatrixReader reader(limits);
  if (!json::sax_parse(body.begin(), body.end(), &reader) || !reader.Complete())
    return std::nullopt;
  return reader.Take();
}

}  // namespace gpumeter::history
