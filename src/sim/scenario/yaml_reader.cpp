#include "sim/scenario/yaml_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace gpumeter::scenario::detail {

void Field::Fail(const std::string& what) const {
  std::string where = path_.empty() ? std::string("(document)") : path_;
  const auto mark = node_.Mark();
  if (mark.line >= 0) where += " (line " + std::to_string(mark.line + 1) + ")";
  throw ReadError(where + ": " + what);
}

void Field::ExpectMap(std::initializer_list<const char*> allowed) const {
  if (!node_.IsMap()) Fail("expected a mapping");
  for (const auto& kv : node_) {
    const auto key = kv.first.as<std::string>();
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      Field(kv.first, path_.empty() ? key : path_ + "." + key)
          .Fail("unknown field '" + key + "' (allowed: " + list + ")");
    }
  }
}

void Field::ExpectSequence() const {
  if (!node_.IsSequence()) Fail("expected a list");
}

bool Field::Has(const char* key) const { return node_.IsMap() && node_[key]; }

Field Field::Child(const char* key) const {
  auto opt = Optional(key);
  if (!opt) Fail(std::string("missing required field '") + key + "'");
  return *opt;
}

std::optional<Field> Field::Optional(const char* key) const {
  if (!node_.IsMap()) Fail("expected a mapping");
  YAML::Node child = node_[key];
  if (!child || child.IsNull()) return std::nullopt;
  return Field(child, path_.empty() ? key : path_ + "." + key);
}

size_t Field::Size() const { return node_.size(); }

Field Field::At(size_t i) const { return Field(node_[i], path_ + "[" + std::to_string(i) + "]"); }

std::string Field::Str() const {
  if (!node_.IsScalar()) Fail("expected a string");
  return node_.Scalar();
}

uint64_t Field::UInt() const {
  if (!node_.IsScalar()) Fail("expected a non-negative integer");
  const std::string& s = node_.Scalar();
  if (!s.empty() && s[0] == '-') Fail("must not be negative, got " + s);
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE)
    Fail("expected a non-negative integer, got '" + s + "'");
  return v;
}

double Field::Double() const {
  if (!node_.IsScalar()) Fail("expected a number");
  const std::string& s = node_.Scalar();
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    Fail("expected a finite number, got '" + s + "'");
  return v;
}

bool Field::Bool() const {
  if (!node_.IsScalar()) Fail("expected true or false");
  const std::string& s = node_.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  Fail("expected true or false, got '" + s + "'");
}

std::string Field::Str(const char* key, std::string def) const {
  auto f = Optional(key);
  return f ? f->Str() : def;
}
uint64_t Field::UInt(const char* key, uint64_t def) const {
  auto f = Optional(key);
  return f ? f->UInt() : def;
}
double Field::Double(const char* key, double def) const {
  auto f = Optional(key);
  return f ? f->Double() : def;
}
bool Field::Bool(const char* key, bool def) const {
  auto f = Optional(key);
  return f ? f->Bool() : def;
}

}  // namespace gpumeter::scenario::detail
