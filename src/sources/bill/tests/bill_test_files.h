// Files for the bill readers' tests: written under a fresh temporary directory, plain or gzip.
#pragma once

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace gpumeter::bill::testing {

// Files under a fresh directory of the test's own.
class TempFiles {
 public:
  std::string Plain(const std::string& name, const std::string& text) const {
    const auto p = (dir_.path() / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // `cut`: bytes dropped from the end of the compressed file (a download cut short).
  std::string Gzip(const std::string& name, const std::string& text, size_t cut = 0) const {
    const auto p = (dir_.path() / name).string();
    gzFile g = gzopen(p.c_str(), "wb");
    gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
    gzclose(g);
    if (cut) std::filesystem::resize_file(p, std::filesystem::file_size(p) - cut);
    return p;
  }
  std::string Dir() const { return dir_.path().string(); }

 private:
  gpumeter::testing::TempDir dir_{"gpumeter-bill"};
};

}  // namespace gpumeter::bill::testing
