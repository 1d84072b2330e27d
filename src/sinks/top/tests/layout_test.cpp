// The layout: unknown prints as `?`; a failing source shows since when the data is stale and
// why; the units view's total row is the sum of the rows; the key help is on the screen only.
#include <gtest/gtest.h>

#include "sinks/top/layout.h"

namespace gpumeter::top {
namespace {

FrameData OneUnit() {
  FrameData f;
  f.source = "agent http://x";
  f.at_unix_s = 3600;  // 01:00:00Z
  UnitNow u;
  u.key = {"n1", "GPU-a", "GPU-a", "H100", "", domain::SharingMode::kExclusive, 1.0};
  u.label = "GPU0";
  u.memory_total_bytes = 4.0 * (1 << 30);
  u.owners = {{{domain::OwnerKind::kContainer, "ml", "p", "c"},
               1.0,
               0.25,
               1.0 * (1 << 30),
               std::nullopt,
               std::nullopt},
              {{domain::OwnerKind::kIdle, "", "", ""},
               std::nullopt,
               0.75,
               3.0 * (1 << 30),
               std::nullopt,
               std::nullopt}};
  f.units = {u};
  return f;
}

TEST(TopLayout, UnknownIsAQuestionMark) {
  EXPECT_EQ(Percent(std::nullopt), "?");
  EXPECT_EQ(Gib(std::nullopt), "?");
  EXPECT_EQ(Watts(std::nullopt), "?");
  EXPECT_EQ(Money(std::nullopt), "?");
  EXPECT_EQ(Percent(0.0), "0.0%");
  EXPECT_EQ(Bar(0.5, 4), "[##..]");
}

TEST(TopLayout, AnEstimateShowsItsBoundAndALowerBoundSaysSo) {
  EXPECT_EQ(ComputePercent(0.5, 0.0, false), "50.0%");
  EXPECT_EQ(ComputePercent(0.3, 0.25, false), "30+-25%");
  EXPECT_EQ(ComputePercent(0.12, 0.0, true), ">=12.0%");
  EXPECT_EQ(ComputePercent(0.12, 0.3, true), ">=12.0%") << "unknown outranks a bound";
  EXPECT_EQ(ComputePercent(std::nullopt, 0.3, false), "?");
  EXPECT_EQ(ComputePercent(0.5, std::nullopt, false), "50.0%");
  // Power whose energy split was estimated: the truth within ± (under half a watt: none shown).
  EXPECT_EQ(Watts(350.0, 40.0), "350+-40W");
  EXPECT_EQ(Watts(350.0, 0.2), "350 W");
  EXPECT_EQ(Watts(350.0, std::nullopt), "350 W");
  EXPECT_EQ(Watts(std::nullopt, 40.0), "?");
}

// At 80 columns the two fixed lines (they do not scroll sideways) fit whole: the key list gives
// way to "? help  q quit", the status line leaves out its last parts whole (it was once cut
// mid-word).
TEST(TopLayout, TheFixedLinesFitANarrowTerminalInWholeWords) {
  auto f = OneUnit();
  f.source = "agent http://gpu-node-a100-0042.cluster.local:9402";
  f.span_seconds = 10;
  ViewState v;
  v.interactive = true;
  v.width = 80;
  v.filter.text = "vision";
  FetchStatus st;
  st.interval_s = 0.5;
  const auto lines = Layout(&f, v, st);
  const auto text = PlainText({lines[0], lines[1]});
  const auto title = text.substr(0, text.find('\n'));
  const auto status = text.substr(text.find('\n') + 1, text.rfind('\n') - text.find('\n') - 1);
  EXPECT_LE(title.size(), 80u) << title;
  EXPECT_NE(title.find("? help  q quit"), std::string::npos) << title;
  EXPECT_EQ(title.find("space pause"), std::string::npos) << "the long list gave way";
  EXPECT_LE(status.size(), 80u) << status;
  EXPECT_NE(status.find("filter \"vision\""), std::string::npos)
      << "a filter is never dropped first";
  EXPECT_EQ(status.find("data at"), std::string::npos) << "a part too long gave way: " << status;
  v.width = 0;  // --once, or a terminal of unknown width: everything
  const auto all = PlainText({Layout(&f, v, st)[1]});
  EXPECT_NE(all.find("data at 01:00:00Z (means over 10 s)"), std::string::npos) << all;
  // Whole parts only: each part shown is one of the full line's, in its order.
  size_t at = 0;
  for (size_t from = 0; from <= status.size();) {
    const size_t end = std::min(status.find("  ", from), status.size());
    const std::string part = status.substr(from, end - from);
    const size_t found = all.find(part, at);
    EXPECT_NE(found, std::string::npos) << "'" << part << "' is not a whole part of " << all;
    if (found != std::string::npos) at = found + part.size();
    from = end + 2;
  }
  EXPECT_NE(all.find("every 0.5 s"), std::string::npos) << all;
  v.paused = true, v.width = 40;
  EXPECT_NE(PlainText({Layout(&f, v, st)[1]}).find("PAUSED"), std::string::npos);
}

TEST(TopLayout, UnitsViewTotalsAndStaleLine) {
  const auto f = OneUnit();
  ViewState v;
  FetchStatus st;
  st.now_unix_s = 3700;
  st.failing_since_unix_s = 3660;
  st.error = "--agent http://x/api/v1/units: unreachable (Connection)";
  const auto text = PlainText(Layout(&f, v, st));
  EXPECT_NE(text.find("STALE since 01:01:00Z (40 s): --agent http://x/api/v1/units: unreachable"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("data at 01:00:00Z"), std::string::npos) << text;
  // The total row: 100 % of compute, all 4 GiB; power unknown in the rows, so unknown in the sum.
  const auto total = text.substr(text.find("= total"));
  const auto line = total.substr(0, total.find('\n'));
  EXPECT_NE(line.find("100.0%"), std::string::npos) << line;  // held: the one container's 1
  EXPECT_NE(line.find("100.0%", line.find("100.0%") + 1), std::string::npos) << line;  // compute
  EXPECT_NE(line.find("4.00 GiB"), std::string::npos) << line;
  EXPECT_EQ(line.back(), '?') << line;
  EXPECT_EQ(text.find("keys:"), std::string::npos);
  v.interactive = true;
  EXPECT_NE(PlainText(Layout(&f, v, st)).find("q quit"), std::string::npos);
  EXPECT_NE(PlainText(Layout(nullptr, v, {})).find("waiting for the first reply"),
            std::string::npos);
}

}  // namespace
}  // namespace gpumeter::top

namespace gpumeter::top {
namespace {

// MEMBUSY beside COMPUTE in both views: a memory-bound container (25 % SM, 60 % traffic) and idle
// (40 %); the total adds up to 100 %; unknown traffic (an agent before it) is `?`, an estimate
// a+-b, a lower bound >=a.
TEST(TopLayout, MemoryTrafficIsAColumnOfItsOwnInBothViews) {
  auto f = OneUnit();
  f.units[0].owners[0].memory_busy_ratio = 0.60;
  f.units[0].owners[1].memory_busy_ratio = 0.40;
  ViewState v;
  auto text = PlainText(Layout(&f, v, {}));
  EXPECT_NE(text.find("MEMBUSY"), std::string::npos) << text;
  const auto row = text.substr(text.find("ml/p/c"));
  const auto line = row.substr(0, row.find('\n'));
  EXPECT_NE(line.find("25.0%"), std::string::npos) << line;
  EXPECT_NE(line.find("60.0%"), std::string::npos) << line;
  EXPECT_LT(line.find("25.0%"), line.find("60.0%")) << "COMPUTE, then MEMBUSY: " << line;
  const auto total = text.substr(text.find("= total"));
  const auto total_line = total.substr(0, total.find('\n'));
  size_t hundreds = 0;
  for (auto at = total_line.find("100.0%"); at != std::string::npos;
       at = total_line.find("100.0%", at + 1))
    ++hundreds;
  EXPECT_EQ(hundreds, 3u) << "held, compute and memory busy time each 100 %: " << total_line;
  v.view = View::kPods;
  text = PlainText(Layout(&f, v, {}));
  EXPECT_NE(text.find("MEMBUSY"), std::string::npos) << text;
  const auto pod = text.substr(text.find("ml/p/c"));
  EXPECT_NE(pod.substr(0, pod.find('\n')).find("60.0%"), std::string::npos) << pod;
  f.units[0].owners[0].memory_busy_ratio = std::nullopt;
  text = PlainText(Layout(&f, v, {}));
  const auto unknown = text.substr(text.find("ml/p/c"));
  EXPECT_EQ(unknown.substr(0, unknown.find('\n')).find("60.0%"), std::string::npos);
  EXPECT_NE(unknown.substr(0, unknown.find('\n')).find(" ? "), std::string::npos) << unknown;
  f.units[0].owners[0].memory_busy_ratio = 0.3;
  f.units[0].owners[0].memory_busy_bound_ratio = 0.2;
  text = PlainText(Layout(&f, v, {}));
  EXPECT_NE(text.find("30+-20%"), std::string::npos) << text;
  f.units[0].owners[0].memory_busy_unknown = true;
  text = PlainText(Layout(&f, v, {}));
  EXPECT_NE(text.find(">=30.0%"), std::string::npos) << text;
}

// A name cut to its column ends between characters: half of one is invalid UTF-8 on the screen.
TEST(TopLayout, ANameIsCutBetweenCharacters) {
  const std::string e = "\xc3\xa9";                    // é, 2 bytes
  EXPECT_EQ(Fit(e + e + e + e + e, 7), e + e + "..");  // 5 bytes of room hold 2 of them
  EXPECT_EQ(Fit("abcdefghij", 6), "abcd..");
  EXPECT_EQ(Fit(e + e, 4), e + e);
  EXPECT_EQ(Fit("\xff", 4), "\\xff") << "escaped first";
}

}  // namespace
}  // namespace gpumeter::top
