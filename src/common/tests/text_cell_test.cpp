// ValidUtf8: every invalid UTF-8 sequence becomes U+FFFD, one per maximal subpart (the Unicode
// Standard's and WHATWG's practice), and the result is cut at a code point's boundary.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "common/text_cell.h"

namespace gpumeter {
namespace {

const std::string kFffd = "\xef\xbf\xbd";  // U+FFFD REPLACEMENT CHARACTER, as UTF-8

// Whether `s` is well-formed UTF-8, by the decoder under test's own rule.
bool IsValid(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto seq = text_cell_detail::Utf8At(s, i);
    if (!seq.valid) return false;
    i += seq.length;
  }
  return true;
}

TEST(ValidUtf8, ValidTextPassesUnchanged) {
  EXPECT_EQ(ValidUtf8(""), "");
  EXPECT_EQ(ValidUtf8("gpu-burn"), "gpu-burn");
  // é (2 bytes), 日 (3), 😀 U+1F600 (4), U+10FFFF (the last code point), U+FFFD itself.
  const std::string multi = "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf " + kFffd;
  EXPECT_EQ(ValidUtf8(multi), multi);
  // Controls, quotes and backslashes are valid UTF-8: escaping them is the format's business.
  EXPECT_EQ(ValidUtf8(std::string("a\"b\\c\nd\0e", 9)), std::string("a\"b\\c\nd\0e", 9));
}

TEST(ValidUtf8, BytesThatStartNoSequence) {
  EXPECT_EQ(ValidUtf8("\xff\xfe"), kFffd + kFffd);
  EXPECT_EQ(ValidUtf8("a\x80z"), "a" + kFffd + "z");  // a lone continuation byte
  EXPECT_EQ(ValidUtf8("\xf5\x80\x80\x80"), kFffd + kFffd + kFffd + kFffd);
}

TEST(ValidUtf8, OverlongForms) {
  // '/' as two bytes: C0 and C1 start no sequence, so each byte is one U+FFFD.
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), kFffd + kFffd);
  // Three and four bytes: E0 needs A0..BF next, F0 needs 90..BF.
  EXPECT_EQ(ValidUtf8("\xe0\x80\xaf"), kFffd + kFffd + kFffd);
  EXPECT_EQ(ValidUtf8("\xf0\x80\x80\xaf"), kFffd + kFffd + kFffd + kFffd);
}

TEST(ValidUtf8, Surrogates) {
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), kFffd + kFffd + kFffd);  // U+D800
  EXPECT_EQ(ValidUtf8("\xed\xbf\xbf"), kFffd + kFffd + kFffd);  // U+DFFF
  EXPECT_EQ(ValidUtf8("\xed\x9f\xbf"), "\xed\x9f\xbf");         // U+D7FF is fine
}

TEST(ValidUtf8, AboveU10FFFF) {
  EXPECT_EQ(ValidUtf8("\xf4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // U+110000
}

TEST(ValidUtf8, SequencesCutShortAreOneReplacementEach) {
  EXPECT_EQ(ValidUtf8("\xe2\x82"), kFffd);  // € without its last byte, at the end
  // … before another character, which is kept.
  EXPECT_EQ(ValidUtf8(std::string("\xe2\x82") + "A"), kFffd + "A");
  EXPECT_EQ(ValidUtf8("\xf0\x9f\x98\xe2\x82\xac"), kFffd + "\xe2\x82\xac");
  // What the kernel leaves of "tensor-worker-ü" in a 15-byte command name.
  EXPECT_EQ(ValidUtf8("tensor-worker-\xc3"), "tensor-worker-" + kFffd);
}

TEST(ValidUtf8, TheCapIsInBytesOfOutputAndNeverCutsACodePoint) {
  EXPECT_EQ(ValidUtf8(std::string(5000, 'x')).size(), kMaxLabelValueBytes);
  EXPECT_EQ(ValidUtf8("abcdef", 4), "abcd");
  // é is 2 bytes: 3 bytes hold one of them, not one and a half.
  EXPECT_EQ(ValidUtf8("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9");
  EXPECT_EQ(ValidUtf8("a\xf0\x9f\x98\x80", 4), "a");
  // A replacement takes 3 bytes of the cap, whatever the bad sequence's length was.
  EXPECT_EQ(ValidUtf8("\xff\xff", 5), kFffd);
  EXPECT_EQ(ValidUtf8("\xff\xff", 6), kFffd + kFffd);
  EXPECT_EQ(ValidUtf8("abc", 0), "");
  // 1023 ASCII bytes, then a 2-byte character that would end at 1025: left out whole.
  const auto cut = ValidUtf8(std::string(kMaxLabelValueBytes - 1, 'x') + "\xc3\xa9");
  EXPECT_EQ(cut, std::string(kMaxLabelValueBytes - 1, 'x'));
}

TEST(ValidUtf8, AppendsToWhatIsThere) {
  std::string out = "process=";
  AppendValidUtf8(out, std::string("\xff") + "x");
  EXPECT_EQ(out, "process=" + kFffd + "x");
}

// No byte that JSON escapes (controls, quote, backslash): such a string's JSON is itself, quoted.
bool Plain(const std::string& s) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') return false;
  return true;
}

// Three-byte strings over every lead byte and the boundaries of every range: the result is valid
// UTF-8 within the cap, the input itself exactly when it was valid, and the same as the JSON
// API's strings (nlohmann's dump with error_handler_t::replace, another decoder that replaces
// maximal subparts), so /metrics and /api/v2 show a name alike.
TEST(ValidUtf8, AnyInputGivesValidUtf8AsTheJsonApiDoes) {
  const auto replace = nlohmann::json::error_handler_t::replace;
  std::string s;
  for (unsigned a = 0; a < 256; ++a)
    for (unsigned b = 0x70; b < 256; b += 3)
      for (unsigned c :
           {0x00u, 0x41u, 0x80u, 0x8fu, 0x90u, 0x9fu, 0xa0u, 0xbfu, 0xc3u, 0xedu, 0xf4u, 0xffu}) {
        s = {static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)};
        const auto out = ValidUtf8(s, 7);
        ASSERT_TRUE(IsValid(out)) << a << " " << b << " " << c;
        ASSERT_LE(out.size(), 7u);
        ASSERT_EQ(out == s, IsValid(s)) << a << " " << b << " " << c;
        if (Plain(s)) {
          ASSERT_EQ(nlohmann::json(s).dump(-1, ' ', false, replace),
                    "\"" + ValidUtf8(s, std::numeric_limits<size_t>::max()) + "\"")
              << a << " " << b << " " << c;
        }
      }
}

TEST(TextCell, TerminalCellStillEscapesEveryInvalidByte) {
  EXPECT_EQ(TerminalCell("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(TerminalCell("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(TerminalCell("\xe2\x82"), "\\xe2\\x82");
  EXPECT_EQ(TerminalCell("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");
}

}  // namespace
}  // namespace gpumeter
