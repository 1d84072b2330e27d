// Reading YAML files (scenarios, pricing, guardrails, kubeconfig, the device plugin's config) with
// errors that say where: "LABEL: PATH: WHAT (line N)", e.g.
//   pricing.yaml: nodes.p5.48xlarge.gpus: a whole number of GPUs >= 1 (line 4)
// LABEL names the document (its path, or what it is), PATH the value from the document's root
// ("gpus[0].memory_mib"; empty for the root itself) and N the 1-based line when yaml-cpp knows it.
//
// Errors: Load and Parse return Expected. A Field's accessors throw ReadError instead: a format
// reads dozens of values, and an Expected per value would bury each format's shape under checks
// that all say "stop here". ReadError never leaves a parser: each parser's public function runs
// its body through Parse (or catches ReadError itself) and returns an Error (kInvalidInput), so no
// exception crosses a module's public functions (common/error.h).
//
// A document with a duplicate key in any mapping, or with a control character (NUL, …), is
// refused by Load with the path and both lines: no format guesses which of two values was meant.
//
// Load is the only place gpumeter parses YAML (nothing else under src/ calls YAML::Load), so every
// YAML input is held to these limits, each refused with the label and, but for size, the line:
// - No aliases ("*name", so no merge key "<<: *name"): a few hundred bytes of nested aliases (a
//   "billion laughs") stand for billions of nodes, and none of the formats needs them, so they are
//   refused rather than counted ("pricing.yaml: line 12, column 9: YAML aliases are not accepted
//   (*base); write the value out"). An anchor ("&name") that nothing refers to is harmless.
// - At most kMaxDocumentBytes, whoever read the text (the file readers have caps of their own).
// - Collections nested at most kMaxDepth deep (a top-level mapping is depth 1; the formats need
//   under 10).
// These are checked on the parser's events before any node is built, so a refused document costs
// one pass over its bytes; an accepted one is then parsed again into nodes. yaml-cpp's scanner
// reads a flow collection ("[…]", "{…}") to its end before the parser sees it (it might be a
// mapping's key), so there the size cap is what bounds memory (a token is about 100 bytes).
//
// Ownership and threads: a Field holds a reference to its whole document (yaml-cpp nodes share it)
// and may outlive the Expected it came from. Fields are read-only; use one document's Fields from
// one thread at a time (yaml-cpp promises no more).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/error.h"

namespace gpumeter::yaml {

// Thrown by a Field's accessors; what() is the whole message, label first.
struct ReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What messages call the keys of a mapping: "key" in most files, "field" in scenarios (their docs
// speak of fields).
enum class KeyWord { kKey, kField };

// A node of a document together with its path from the root and the document's label.
class Field {
 public:
  // The root of a document; `label` names it in every message.
  Field(YAML::Node root, std::string label, KeyWord word = KeyWord::kKey);

  const std::string& path() const { return path_; }
  const std::string& label() const { return doc_->label; }
  int line() const;  // 1-based; 0 when unknown (an absent field, an empty document)

  bool Exists() const { return node_.IsDefined(); }  // false only for Get() of an absent key
  bool IsNull() const { return node_.IsNull(); }
  bool IsScalar() const { return node_.IsScalar(); }
  bool IsMap() const { return node_.IsMap(); }
  bool IsSequence() const { return node_.IsSequence(); }

  // "LABEL: PATH: WHAT (line N)" for this value.
  std::string Message(const std::string& what) const;
  [[noreturn]] void Fail(const std::string& what) const;  // throws ReadError(Message(what))

  // Mappings. Keys are read as yaml-cpp reads them as strings (a null key is "null"); a key that
  // is itself a mapping or list is an error.
  // Requires a mapping whose keys are all in `allowed`.
  void ExpectMap(std::initializer_list<const char*> allowed) const;
  // Lookups fail unless this is a mapping, except Has and Get. A key whose value is null ("key:"
  // or "key: ~") counts as absent for Child, Optional and the defaulted accessors, and as present
  // for Has, Find and Get.
  Field Child(const char* key) const;                    // required
  std::optional<Field> Optional(const char* key) const;  // absent or null: nullopt
  std::optional<Field> Find(const char* key) const;      // absent: nullopt
  bool Has(const char* key) const;                       // false too when this is no mapping
  Field Get(const char* key) const;  // never fails: absent (Exists() false, no line) if missing
  // Calls fn(key, value) for each entry in document order.
  template <typename Fn>
  void ForEachEntry(Fn fn) const {
    if (!node_.IsMap()) Fail("expected a mapping");
    for (const auto& kv : node_) {
      const std::string key = KeyOf(kv.first);
      fn(key, Field(kv.second, Join(key), doc_));
    }
  }

  // Sequences.
  void ExpectSequence() const;
  size_t Size() const;       // entries of a mapping or list; 0 for a scalar or null
  Field At(size_t i) const;  // i < Size() of a list
  // Calls fn(item) for each item of a list.
  template <typename Fn>
  void ForEachItem(Fn fn) const {
    ExpectSequence();
    for (size_t i = 0; i < Size(); ++i) fn(At(i));
  }

  // Scalars, strictly: a string must be a scalar (a null is none); an integer is decimal digits
  // only ("010" is 10, as in YAML 1.2, not 8 as in 1.1) and must fit; a double is what strtod
  // reads in full and finite; a bool is true or false, nothing else.
  std::string Str() const;
  uint64_t UInt() const;
  double Double() const;
  bool Bool() const;
  // The same for an optional key, with a default when it is absent or null.
  std::string Str(const char* key, std::string def) const;
  uint64_t UInt(const char* key, uint64_t def) const;
  double Double(const char* key, double def) const;
  bool Bool(const char* key, bool def) const;

  // The value as yaml-cpp's own YAML::Node::as<T> reads it, or nullopt where that fails: integers
  // may be hex or octal, doubles .inf or .nan, booleans yes/no/on/off, and a null reads as the
  // string "null". For the formats that have always been read so (pricing, guardrails, the
  // device plugin's config), so that what they accepted stays accepted; new formats use the strict
  // accessors above.
  template <typename T>
  std::optional<T> As() const {
    try {
      return node_.as<T>();
    } catch (const YAML::Exception&) {
      return std::nullopt;
    }
  }

 private:
  struct Document {
    std::string label;
    KeyWord word;
  };
  Field(YAML::Node node, std::string path, std::shared_ptr<const Document> doc)
      : node_(std::move(node)), path_(std::move(path)), doc_(std::move(doc)) {}
  std::string Join(const std::string& key) const;
  std::string KeyOf(const YAML::Node& key) const;
  const char* Word() const;

  YAML::Node node_;
  std::string path_;
  std::shared_ptr<const Document> doc_;
};

// The limits Load holds every document to (above).
inline constexpr size_t kMaxDocumentBytes = 16u << 20;
inline constexpr size_t kMaxDepth = 64;

// Parses `text`; a syntax error is "LABEL: not YAML: line N, column M: what". An empty document is
// a null root (IsNull()).
Expected<Field> Load(std::string_view text, const std::string& label, KeyWord word = KeyWord::kKey);

// Loads `text` and returns read(root) (a T or an Expected<T>), or the ReadError it threw as an
// Error (kInvalidInput). The one place a parser's exceptions stop.
template <typename T, typename Read>
Expected<T> Parse(std::string_view text, const std::string& label, Read&& read,
                  KeyWord word = KeyWord::kKey) {
  auto root = Load(text, label, word);
  if (!root) return tl::unexpected(root.error());
  try {
    if constexpr (std::is_void_v<T>) {
      read(*root);
      return {};
    } else {
      return Expected<T>(read(*root));
    }
  } catch (const ReadError& e) {
    return MakeError(ErrorCode::kInvalidInput, e.what());
  } catch (const YAML::Exception& e) {  // a reader that went past Field to yaml-cpp
    return MakeError(ErrorCode::kInvalidInput, label + ": " + e.what());
  }
}

}  // namespace gpumeter::yaml
