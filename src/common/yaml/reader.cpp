#include "common/yaml/reader.h"

#include <yaml-cpp/eventhandler.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

namespace gpumeter::yaml {

Field::Field(YAML::Node root, std::string label, KeyWord word)
    : node_(std::move(root)),
      doc_(std::make_shared<const Document>(Document{std::move(label), word})) {}

int Field::line() const {
  // An absent field's node has no mark; a node yaml-cpp built itself has the null mark (-1).
  if (!node_.IsDefined()) return 0;
  return node_.Mark().line + 1;
}

std::string Field::Message(const std::string& what) const {
  std::string out = doc_->label + ": ";
  if (!path_.empty()) out += path_ + ": ";
  out += what;
  if (const int n = line(); n > 0) out += " (line " + std::to_string(n) + ")";
  return out;
}

void Field::Fail(const std::string& what) const { throw ReadError(Message(what)); }

std::string Field::Join(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

const char* Field::Word() const { return doc_->word == KeyWord::kField ? "field" : "key"; }

std::string Field::KeyOf(const YAML::Node& key) const {
  // As the readers have always read keys (YAML::Node::as<std::string>): a null key is "null".
  if (key.IsNull()) return "null";
  if (!key.IsScalar()) Field(key, path_, doc_).Fail(std::string("expected a string as ") + Word());
  return key.Scalar();
}

void Field::ExpectMap(std::initializer_list<const char*> allowed) const {
  if (!node_.IsMap()) Fail("expected a mapping");
  for (const auto& kv : node_) {
    const auto key = KeyOf(kv.first);
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (ok) continue;
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    Field(kv.first, Join(key), doc_)
        .Fail("unknown " + std::string(Word()) + " '" + key + "' (allowed: " + list + ")");
  }
}

std::optional<Field> Field::Find(const char* key) const {
  if (!node_.IsMap()) Fail("expected a mapping");
  const YAML::Node child = node_[key];
  if (!child) return std::nullopt;
  return Field(child, Join(key), doc_);
}

std::optional<Field> Field::Optional(const char* key) const {
  auto child = Find(key);
  if (child && child->IsNull()) return std::nullopt;
  return child;
}

Field Field::Child(const char* key) const {
  auto child = Optional(key);
  if (!child) Fail("missing required " + std::string(Word()) + " '" + key + "'");
  return *child;
}

bool Field::Has(const char* key) const { return node_.IsMap() && node_[key]; }

Field Field::Get(const char* key) const {
  if (node_.IsMap())
    if (const YAML::Node child = node_[key]) return Field(child, Join(key), doc_);
  return Field(YAML::Node(YAML::NodeType::Undefined), Join(key), doc_);
}

void Field::ExpectSequence() const {
  if (!node_.IsSequence()) Fail("expected a list");
}

size_t Field::Size() const { return node_.IsMap() || node_.IsSequence() ? node_.size() : 0; }

Field Field::At(size_t i) const {
  if (!node_.IsSequence() || i >= node_.size()) Fail("no item " + std::to_string(i));
  return Field(node_[i], path_ + "[" + std::to_string(i) + "]", doc_);
}

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

namespace {

// yaml-cpp keeps every entry of a mapping, duplicates included, and lookups see the first: a file
// that says one thing twice is refused rather than read by guessing which it meant. Walked with a
// stack of its own, so a deeply nested document cannot exhaust the call stack; Screen has refused
// aliases, so no node is shared and each is visited once.
std::optional<std::string> DuplicateKey(const YAML::Node& root, const std::string& label,
                                        KeyWord word) {
  std::vector<std::pair<YAML::Node, std::string>> todo{{root, ""}};
  while (!todo.empty()) {
    const YAML::Node node = todo.back().first;
    const std::string path = std::move(todo.back().second);
    todo.pop_back();
    const auto join = [&](const std::string& k) { return path.empty() ? k : path + "." + k; };
    if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i)
        todo.emplace_back(node[i], path + "[" + std::to_string(i) + "]");
    } else if (node.IsMap()) {
      std::map<std::string, int> seen;  // key -> line
      for (const auto& kv : node) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "null";
        const int line = kv.first.Mark().line + 1;
        if (auto [it, fresh] = seen.emplace(key, line); !fresh)
          return label + ": " + (path.empty() ? "" : path + ": ") + "duplicate " +
                 (word == KeyWord::kField ? "field" : "key") + " '" + key + "' (line " +
                 std::to_string(line) + ", first at line " + std::to_string(it->second) + ")";
        todo.emplace_back(kv.second, join(key));
      }
    }
  }
  return std::nullopt;
}

// yaml-cpp reads a NUL or another control character as garbage and says so obscurely; name it.
std::optional<std::string> ControlCharacter(std::string_view text, const std::string& label) {
  int line = 1;
  for (const char c : text) {
    if (c == '\n') ++line;
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\r' && c != '\t') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", u);
      return label + ": not YAML: line " + std::to_string(line) + ": control character " + hex +
             " (a binary file?)";
    }
  }
  return std::nullopt;
}

// "line N, column M: " where yaml-cpp knows the place, else "".
std::string Where(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) +
         ": ";
}

// Why Screen stopped reading, and where.
struct Refused {
  YAML::Mark mark;
  std::string what;
};

// Reads the document's events before any node is built and stops at the first alias or at a
// collection nested too deep: building or walking the nodes of a small document with nested
// aliases ("billion laughs") costs time exponential in its size. yaml-cpp numbers anchors 1, 2, …
// in the order it announces them (OnAnchor), which is how an alias's number gets its name back.
class Screen final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const std::string name =
        anchor >= 1 && anchor <= anchors_.size() ? " (*" + anchors_[anchor - 1] + ")" : "";
    throw Refused{mark, "YAML aliases are not accepted" + name + "; write the value out"};
  }
  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchors_.push_back(name); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Enter(const YAML::Mark& mark) {
    if (++depth_ > kMaxDepth)
      throw Refused{mark, "nested deeper than " + std::to_string(kMaxDepth) + " levels (refused)"};
  }

  size_t depth_ = 0;
  std::vector<std::string> anchors_;  // by anchor number - 1
};

// The document's root, or why it is refused: not YAML, or not a document Screen lets through.
Expected<YAML::Node> Build(std::string_view text, const std::string& label) {
  try {
    {
      std::istringstream in{std::string(text)};
      YAML::Parser parser(in);
      Screen screen;
      parser.HandleNextDocument(screen);  // the first document only, as YAML::Load reads
    }
    // yaml-cpp builds nodes only through Load, so an accepted document is parsed a second time.
    return YAML::Load(std::string(text));
  } catch (const Refused& r) {
    return MakeError(ErrorCode::kInvalidInput, label + ": " + Where(r.mark) + r.what);
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidInput, label + ": not YAML: " + Where(e.mark) + e.msg);
  }
}

}  // namespace

Expected<Field> Load(std::string_view text, const std::string& label, KeyWord word) {
  if (text.size() > kMaxDocumentBytes) {
    const std::string what = std::to_string(text.size()) + " bytes, more than the " +
                             std::to_string(kMaxDocumentBytes >> 20) +
                             " MiB a YAML document may have (refused)";
    return MakeError(ErrorCode::kInvalidInput, label + ": " + what);
  }
  if (auto bad = ControlCharacter(text, label)) return MakeError(ErrorCode::kInvalidInput, *bad);
  auto root = Build(text, label);
  if (!root) return tl::unexpected(root.error());
  if (auto dup = DuplicateKey(*root, label, word)) return MakeError(ErrorCode::kInvalidInput, *dup);
  return Field(std::move(*root), label, word);
}

}  // namespace gpumeter::yaml
