// A command's --output file: written whole, readable by its owner only (0600, as the store is),
// an existing file truncated and narrowed; one that cannot be written is exit 1.
#include "app/usage/output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "support/temp_dir.h"

namespace gpumeter::app {
namespace {

mode_t Mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Output, TheFileIsTheOwnersOnlyNewOrNot) {
  testing::TempDir dir("gpumeter-output");
  const auto fresh = (dir.path() / "report.csv").string();
  const mode_t umask_before = ::umask(0);  // the widest a process could ask for
  EXPECT_EQ(EmitText(std::string("a,b\n1,2\n"), fresh), 0);
  EXPECT_EQ(Mode(fresh), 0600u);
  EXPECT_EQ(Read(fresh), "a,b\n1,2\n");

  const auto old = (dir.path() / "old.json").string();
  std::ofstream(old) << "a longer text that was there before";
  ASSERT_EQ(::chmod(old.c_str(), 0644), 0);
  EXPECT_EQ(EmitText(std::string("{}\n"), old), 0);
  EXPECT_EQ(Mode(old), 0600u) << "narrowed";
  EXPECT_EQ(Read(old), "{}\n") << "truncated";
  ::umask(umask_before);

  EXPECT_EQ(EmitText(std::string("x"), (dir.path() / "missing" / "r.txt").string()), 1);
  EXPECT_EQ(EmitText(Expected<std::string>(MakeError(ErrorCode::kInvalidInput, "bad")), fresh), 2);
}

}  // namespace
}  // namespace gpumeter::app
