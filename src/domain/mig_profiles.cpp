#include "domain/mig_profiles.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace gpumeter::domain {
namespace {

// The A100, H100, H200 and B200 share one geometry of 7 slices; only the memory in the names
// differs (MIG user guide: "the profile names will change according to the memory proportion").
// name suffixes: the GPU's memory per eighth, doubled eighth, half and whole.
std::vector<MigProfile> Geometry(const std::string& eighth, const std::string& quarter,
                                 const std::string& half, const std::string& whole) {
  return {{"1g." + eighth, 1, 1, 7}, {"1g." + quarter, 2, 1, 4}, {"2g." + quarter, 2, 2, 3},
          {"3g." + half, 4, 3, 2},   {"4g." + half, 4, 4, 1},    {"7g." + whole, 8, 7, 1}};
}

std::set<std::string> Words(const std::string& name) {
  std::set<std::string> out;
  std::string w;
  for (const char c : name + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      out.insert(w);
      w.clear();
    }
  }
  return out;
}

}  // namespace

const std::vector<MigModel>& MigModels() {
  static const std::vector<MigModel> models = {
      // The A30 has 4 slices, each a quarter of its memory (MIG user guide, "A30 MIG Profiles").
      {"A30 24GB", 4, {{"1g.6gb", 2, 1, 4}, {"2g.12gb", 4, 2, 2}, {"4g.24gb", 8, 4, 1}}},
      {"A100 40GB", 7, Geometry("5gb", "10gb", "20gb", "40gb")},
      {"A100 80GB", 7, Geometry("10gb", "20gb", "40gb", "80gb")},
      {"H100 80GB", 7, Geometry("10gb", "20gb", "40gb", "80gb")},
      {"H100 94GB", 7, Geometry("12gb", "24gb", "47gb", "94gb")},
      {"H200 141GB", 7, Geometry("18gb", "35gb", "71gb", "141gb")},
      {"B200 180GB", 7, Geometry("23gb", "45gb", "90gb", "180gb")},
  };
  return models;
}

const MigModel* MigModelFor(const std::string& nvml_name) {
  const auto w = Words(nvml_name);
  const auto has = [&](const char* x) { return w.count(x) > 0; };
  // "A100-SXM4-40GB" splits into A100, SXM4, 40GB; "A100 80GB PCIe" into A100, 80GB, PCIE.
  const char* model = nullptr;
  if (has("A100"))
    model = has("80GB") ? "A100 80GB" : has("40GB") ? "A100 40GB" : nullptr;
  else if (has("H100"))
    model =
        has("94GB") || has("NVL") ? "H100 94GB" : "H100 80GB";  // "H100 PCIe" is the 80 GB board
  else if (has("H200"))
    model = "H200 141GB";
  else if (has("A30"))
    model = "A30 24GB";
  else if (has("B200"))
    model = "B200 180GB";
  if (!model) return nullptr;
  const auto& all = MigModels();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const MigModel& m) { return m.model == model; });
  return it == all.end() ? nullptr : &*it;
}

const MigProfile* FindMigProfile(const MigModel& model, std::string_view name) {
  // A compute instance's name leads with its own slices ("1c."): the GPU instance follows.
  if (name.size() > 3 && name[1] == 'c' && name[2] == '.') name.remove_prefix(3);
  // A media extension follows the base name.
  if (const auto ext = name.find_first_of("+-"); ext != std::string_view::npos)
    name = name.substr(0, ext);
  for (const auto& p : model.profiles)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace gpumeter::domain
