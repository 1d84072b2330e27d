// The YAML reader: messages that name the file, the path and the line; strict and yaml-cpp typed
// reads; ReadError stopping at Parse.
#include "common/yaml/reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace gpumeter::yaml {
namespace {

using ::testing::HasSubstr;

// The message a reader of `text` fails with.
template <typename Read>
std::string ErrorOf(const std::string& text, Read read, KeyWord word = KeyWord::kKey) {
  const auto r = Parse<int>(
      text, "f.yaml",
      [&](const Field& root) {
        read(root);
        return 0;
      },
      word);
  EXPECT_FALSE(r) << text;
  return r ? "" : r.error().message;
}

TEST(YamlReader, SyntaxErrorsNameTheLabelAndTheLine) {
  const auto r = Load("a: [1, 2", "f.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
  EXPECT_THAT(r.error().message, HasSubstr("f.yaml: not YAML: line 1, column"));
}

TEST(YamlReader, AnEmptyDocumentIsANullRoot) {
  const auto r = Load("", "f.yaml");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->IsNull());
  EXPECT_EQ(r->line(), 0);
}

TEST(YamlReader, MessagesAreLabelPathWhatAndLine) {
  const std::string text = "a:\n  b:\n    - {c: 1}\n    - {c: x}\n";
  EXPECT_EQ(ErrorOf(text, [](const Field& r) { r.Child("a").Child("b").At(1).Child("c").UInt(); }),
            "f.yaml: a.b[1].c: expected a non-negative integer, got 'x' (line 4)");
  EXPECT_EQ(ErrorOf("- 1", [](const Field& r) { r.ExpectMap({}); }),
            "f.yaml: expected a mapping (line 1)");
  EXPECT_EQ(ErrorOf(text, [](const Field& r) { r.Child("z"); }),
            "f.yaml: missing required key 'z' (line 1)");
  EXPECT_EQ(ErrorOf(text, [](const Field& r) { r.Get("a").Get("q").Fail("absent"); }),
            "f.yaml: a.q: absent")
      << "an absent field has a path but no line";
}

TEST(YamlReader, UnknownKeysSayWhatIsAllowedInTheDocumentsWords) {
  const std::string text = "a: 1\nb: 2\n";
  EXPECT_EQ(ErrorOf(text, [](const Field& r) { r.ExpectMap({"a"}); }),
            "f.yaml: b: unknown key 'b' (allowed: a) (line 2)");
  EXPECT_THAT(ErrorOf(
                  text, [](const Field& r) { r.ExpectMap({"a"}); }, KeyWord::kField),
              HasSubstr("unknown field 'b'"));
  EXPECT_THAT(ErrorOf("? [1]\n: 2\n", [](const Field& r) { r.ExpectMap({"a"}); }),
              HasSubstr("expected a string as key"));
}

TEST(YamlReader, NullIsAbsentForChildAndOptionalButPresentForFindAndGet) {
  auto r = Load("a: ~\nb: 1\n", "f.yaml");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->Optional("a"));
  EXPECT_TRUE(r->Find("a"));
  EXPECT_TRUE(r->Has("a"));
  EXPECT_TRUE(r->Get("a").Exists());
  EXPECT_FALSE(r->Get("z").Exists());
  EXPECT_FALSE(r->Find("z"));
  EXPECT_EQ(r->UInt("a", 7), 7u);
  EXPECT_EQ(r->UInt("b", 7), 1u);
  EXPECT_FALSE(r->Get("b").Get("c").Exists()) << "Get never fails, even on a scalar";
}

TEST(YamlReader, StrictScalars) {
  auto r = Load("u: '010'\nh: 0x10\nd: 1.5e3\ninf: .inf\nt: true\ny: yes\nn: ~\n", "f.yaml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->Child("u").UInt(), 10u) << "decimal, never octal";
  EXPECT_THROW(r->Child("h").UInt(), ReadError);
  EXPECT_DOUBLE_EQ(r->Child("d").Double(), 1500);
  EXPECT_THROW(r->Child("inf").Double(), ReadError);
  EXPECT_TRUE(r->Child("t").Bool());
  EXPECT_THROW(r->Child("y").Bool(), ReadError);
  EXPECT_THROW(r->Get("n").Str(), ReadError);
}

TEST(YamlReader, YamlCppReadsAsBefore) {
  auto r = Load("h: 0x10\no: 010\ninf: .inf\ny: yes\nn: ~\nl: [1]\n", "f.yaml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->Get("h").As<long>(), 16);
  EXPECT_EQ(r->Get("o").As<long>(), 8);
  EXPECT_EQ(r->Get("inf").As<double>(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(r->Get("y").As<bool>(), true);
  EXPECT_EQ(r->Get("n").As<std::string>(), "null");
  EXPECT_FALSE(r->Get("l").As<std::string>());
  EXPECT_FALSE(r->Get("absent").As<double>());
}

TEST(YamlReader, EntriesAndItemsInDocumentOrder) {
  auto r = Load("m: {b: 1, a: 2}\ns: [x, y]\n", "f.yaml");
  ASSERT_TRUE(r);
  std::vector<std::string> seen;
  r->Child("m").ForEachEntry(
      [&](const std::string& k, const Field& v) { seen.push_back(v.path() + "=" + k); });
  r->Child("s").ForEachItem([&](const Field& v) { seen.push_back(v.path() + "=" + v.Str()); });
  EXPECT_EQ(seen, (std::vector<std::string>{"m.b=b", "m.a=a", "s[0]=x", "s[1]=y"}));
  EXPECT_EQ(r->Child("s").Size(), 2u);
}

TEST(YamlReader, ParseReturnsWhatTheReaderReturns) {
  const auto ok = Parse<int>("n: 4", "f.yaml",
                             [](const Field& r) { return static_cast<int>(r.Child("n").UInt()); });
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(*ok, 4);
  const auto refused = Parse<int>("n: 4", "f.yaml", [](const Field& r) -> Expected<int> {
    return MakeError(ErrorCode::kNotSupported, r.Message("no"));
  });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kNotSupported);
  EXPECT_EQ(refused.error().message, "f.yaml: no (line 1)");
  const auto bad = Parse<int>("n: [", "f.yaml", [](const Field&) { return 1; });
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("f.yaml: not YAML"));
}

// Every format reads through Load: a key said twice, at any depth, is refused with both lines.
TEST(YamlReader, DuplicateKeysAreRefusedWithThePathAndBothLines) {
  const auto top = Load("a: 1\nb: 2\na: 3\n", "p.yaml");
  ASSERT_FALSE(top);
  EXPECT_EQ(top.error().message, "p.yaml: duplicate key 'a' (line 3, first at line 1)");
  const auto deep = Load("nodes:\n  p5:\n    gpus: 8\n    gpus: 4\n", "p.yaml");
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().message,
            "p.yaml: nodes.p5: duplicate key 'gpus' (line 4, first at line 3)");
  const auto in_list = Load("gpus:\n  - index: 0\n    index: 1\n", "s.yaml", KeyWord::kField);
  ASSERT_FALSE(in_list);
  EXPECT_EQ(in_list.error().message,
            "s.yaml: gpus[0]: duplicate field 'index' (line 3, first at line 2)");
  EXPECT_TRUE(Load("a: {x: 1}\nb: {x: 1}\n", "p.yaml")) << "the same key in two mappings is fine";
}

TEST(YamlReader, ControlCharactersAreNamedNotMisread) {
  const auto nul = Load(std::string("a: 1\nb: \"x\0y\"\n", 14), "p.yaml");
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error().message,
            "p.yaml: not YAML: line 2: control character 0x00 (a binary file?)");
  EXPECT_TRUE(Load("a: 1\r\nb: 'x\ty'\r\n", "p.yaml")) << "tabs and CRLF are text";
}

}  // namespace
}  // namespace gpumeter::yaml
