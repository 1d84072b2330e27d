// The detail pane: the keys that select a row and open it, the marked row, what a pods row and a
// finding show in full, and the scrolling that keeps the selected row on the screen.
#include <gtest/gtest.h>

#include <sstream>

#include "sinks/top/detail.h"
#include "sinks/top/keys.h"

namespace gpumeter::top {
namespace {

using domain::OwnerKind;

OwnerNow Member(const std::string& ns, const std::string& pod, double held, double compute) {
  OwnerNow o;
  o.owner = {OwnerKind::kContainer, ns, pod, "c"};
  o.held_share = held, o.compute_ratio = compute, o.memory_bytes = 2e9, o.power_watts = 100;
  o.cost_per_hour = 1.5;
  return o;
}

// The trainer holds half of a time-sliced H100 and a whole 3g MIG instance of an H200.
FrameData Frame() {
  FrameData f;
  f.source = "test", f.at_unix_s = 1700000000, f.span_seconds = 1, f.currency = "USD";
  UnitNow a;
  a.key = {"n1", "GPU-a", "GPU-a", "NVIDIA H100 80GB HBM3", "", domain::SharingMode::kTimeSlicing,
           1.0};
  a.label = "GPU0";
  a.owners = {Member("ml", "train", 0.5, 0.6), Member("web", "infer", 0.5, 0.1)};
  UnitNow b;
  b.key = {"n1", "MIG-b", "GPU-b", "NVIDIA H200", "3g.71gb", domain::SharingMode::kMig, 3.0 / 7};
  b.label = "GPU1 3g.71gb";
  b.owners = {Member("ml", "train", 1.0, 0.5)};
  f.units = {a, b};
  f.labels[{"ml", "train"}] = {{"team", "vision"}, {"cost-center", "cv-42"}};
  std::string evidence;
  for (int i = 0; i < 60; ++i) evidence += "word" + std::to_string(i) + " ";
  evidence +=
      "GPU-9a000004-0000-4000-8000-000000000004-and-a-token-longer-than-any-line-of-the-"
      "screen-at-eighty-columns-which-must-be-cut-into-pieces-not-lost";
  f.findings = std::vector<FindingNow>{
      {"warning", "idle-allocation", "n1", "ml/train/c", "GPU-a", "short", 10},
      {"critical", "xid", "n1", "ml/train/c", "GPU-a", evidence, 20}};
  return f;
}

std::string Text(const std::vector<Line>& lines) { return PlainText(lines); }

TEST(TopKeys, UpDownSelectRowsEnterOpensTheDetailEscapeCloses) {
  Interaction s;
  ApplyKey(s, {Key::kChar, 'p'}, 10);
  EXPECT_EQ(s.view.selected, 0);
  ApplyKey(s, {Key::kDown}, 10);
  ApplyKey(s, {Key::kChar, 'j'}, 10);
  ApplyKey(s, {Key::kUp}, 10);
  EXPECT_EQ(s.view.selected, 1);
  ApplyKey(s, {Key::kUp}, 10);
  ApplyKey(s, {Key::kUp}, 10);
  EXPECT_EQ(s.view.selected, 0) << "not above the first row";
  ApplyKey(s, {Key::kDown}, 10);
  ApplyKey(s, {Key::kEnter}, 10);
  EXPECT_TRUE(s.view.detail);
  ApplyKey(s, {Key::kDown}, 10);  // a long detail scrolls; the selection stays
  EXPECT_EQ(s.scroll, 1);
  EXPECT_EQ(s.view.selected, 1);
  s.view.filter.text = "ml";
  ApplyKey(s, {Key::kEscape}, 10);
  EXPECT_FALSE(s.view.detail);
  EXPECT_EQ(s.view.filter.text, "ml") << "Escape closes the pane first, the filter stays";
  EXPECT_EQ(s.scroll, 0);
  ApplyKey(s, {Key::kEnter}, 10);
  ApplyKey(s, {Key::kEnter}, 10);
  EXPECT_FALSE(s.view.detail) << "Enter closes it too";
  ApplyKey(s, {Key::kEnter}, 10);
  ApplyKey(s, {Key::kTab}, 10);
  EXPECT_FALSE(s.view.detail);
  EXPECT_EQ(s.view.selected, 0) << "another view starts at its first row";
  ApplyKey(s, {Key::kChar, 'u'}, 10);
  ApplyKey(s, {Key::kEnter}, 10);
  EXPECT_FALSE(s.view.detail) << "the units view has no rows to open";
}

TEST(TopDetail, APodsRowShowsItsContainersOnEachUnitAndThePodsLabels) {
  const auto f = Frame();
  ViewState v;
  v.view = View::kPods, v.by = "pod", v.selected = 0;
  const auto list = Layout(&f, v, {});
  bool marked = false;
  for (const auto& l : list)
    if (!l.empty() && l.front().style == Style::kSelected) {
      marked = true;
      EXPECT_EQ(l.front().text.rfind("> ml/train", 0), 0u) << l.front().text;
    }
  EXPECT_TRUE(marked);
  EXPECT_EQ(RowIds(&f, v).size(), 2u);
  v.detail = true;
  const auto text = Text(Layout(&f, v, {}));
  EXPECT_NE(text.find("pod  ml/train"), std::string::npos) << text;
  // Held: half of GPU0 and 3/7 of a GPU: 92.9 % of one GPU; each unit's line in % of the unit.
  EXPECT_NE(text.find("held            92.9% of one GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("    GPU0: ml/train/c\n      held 50.0%  compute 60.0%"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    GPU1 3g.71gb: ml/train/c\n      held 100.0%  compute 50.0%"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("web/infer"), std::string::npos) << "another pod's container: " << text;
  EXPECT_NE(text.find("cost-center=cv-42, team=vision"), std::string::npos) << text;
  EXPECT_NE(text.find("1.500"), std::string::npos) << text;
}

// A pod's name or label cannot drive the terminal: control characters are escaped in the pane.
TEST(TopDetail, NamesAndEvidenceAreEscapedForTheTerminal) {
  auto f = Frame();
  f.labels[{"ml", "train"}]["team"] = "vision\x1b]0;pwned\x07";
  (*f.findings)[1].evidence = "see \x1b[2J here";
  ViewState v;
  v.view = View::kPods, v.by = "pod", v.selected = 0, v.detail = true;
  for (const auto view : {View::kPods, View::kFindings}) {
    v.view = view;
    const auto text = Text(Layout(&f, v, {}));
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  }
}

// A finding's evidence, cut off in the list at any width, is all there, wrapped to the screen.
TEST(TopDetail, AFindingShowsItsWholeEvidenceWithinTheScreen) {
  const auto f = Frame();
  ViewState v;
  v.view = View::kFindings, v.selected = 0, v.detail = true, v.width = 80;
  const auto lines = Layout(&f, v, {});
  const auto text = Text(lines);
  EXPECT_NE(text.find("critical  xid"), std::string::npos) << "critical first: " << text;
  std::string words, expected;
  enum { kBefore, kIn, kAfter } at = kBefore;
  for (const auto& l : lines) {
    std::string t;
    for (const auto& span : l) t += span.text;
    EXPECT_LE(t.size(), 80u) << t;
    if (at == kIn && t.empty()) at = kAfter;
    if (at == kIn) {
      ASSERT_EQ(t.rfind("    ", 0), 0u) << t;
      words += t.substr(4);
    }
    if (t == "  Evidence") at = kIn;
  }
  EXPECT_EQ(at, kAfter);
  for (const char c : (*f.findings)[1].evidence)
    if (c != ' ') expected += c;
  std::string got;
  for (const char c : words)
    if (c != ' ') got += c;
  EXPECT_EQ(got, expected) << "every character of the evidence, in order";
}

// The selection is a row, not a place: re-sorted by a new frame, it stays on its row; when its
// row goes, the pane closes and the selection stays in range; none to select, no pane.
TEST(TopDetail, TheSelectionFollowsItsRowAcrossFrames) {
  auto f = Frame();
  ViewState v;
  v.view = View::kPods, v.by = "pod", v.selected = 1;
  Reanchor(v, &f);
  ASSERT_EQ(v.selected, 1);
  const std::string infer = v.selected_id;
  v.detail = true;
  f.units[0].owners[1].compute_ratio = 0.99;  // web/infer now sorts first
  Reanchor(v, &f);
  EXPECT_EQ(v.selected, 0);
  EXPECT_EQ(v.selected_id, infer);
  EXPECT_NE(Text(Layout(&f, v, {})).find("pod  web/infer"), std::string::npos);
  f.units[0].owners.erase(f.units[0].owners.begin() + 1);  // web/infer ended
  Reanchor(v, &f);
  EXPECT_FALSE(v.detail) << "its row went away";
  EXPECT_EQ(v.selected, 0);
  EXPECT_NE(v.selected_id, infer);
  Interaction keys{v, 0, false};
  ApplyKey(keys, {Key::kDown}, 10);
  EXPECT_TRUE(keys.view.selected_id.empty()) << "a key names the row by its place";
  v.view = View::kFindings;
  f.findings.reset();
  v.detail = true;
  Reanchor(v, &f);
  EXPECT_FALSE(v.detail);
  EXPECT_NE(Text(Layout(&f, v, {})).find("findings: not available"), std::string::npos);
}

// The pane lists the containers the row adds up: the filter that made the row applies.
TEST(TopDetail, APodsRowsDetailKeepsItsFilter) {
  auto f = Frame();
  f.units[0].owners.push_back(Member("ml", "eval", 0.0, 0.05));
  ViewState v;
  v.view = View::kPods, v.by = "namespace", v.filter.text = "train", v.selected = 0;
  v.detail = true;
  const auto text = Text(Layout(&f, v, {}));
  EXPECT_NE(text.find("namespace  ml"), std::string::npos) << text;
  EXPECT_NE(text.find("ml/train/c"), std::string::npos) << text;
  EXPECT_EQ(text.find("ml/eval"), std::string::npos) << "outside the filter: " << text;
}

TEST(TopDetail, TheScreenFollowsTheSelectedRow) {
  std::vector<Line> lines(40, Line{{"row", Style::kNormal}});
  EXPECT_EQ(FollowSelection(lines, 7, 10), 7) << "nothing selected: as it was";
  lines[25] = Line{{"> row", Style::kSelected}};
  // Line 25 must land on screen rows 2..9 of 10: scroll in [16, 23].
  EXPECT_EQ(FollowSelection(lines, 0, 10), 16);
  EXPECT_EQ(FollowSelection(lines, 30, 10), 23);
  EXPECT_EQ(FollowSelection(lines, 20, 10), 20) << "already on the screen";
}

}  // namespace
}  // namespace gpumeter::top
