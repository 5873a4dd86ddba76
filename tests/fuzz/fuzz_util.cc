#include "tests/fuzz/fuzz_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "google/protobuf/text_format.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace fuzz {
namespace {

namespace fs = std::filesystem;

std::string ReadOrDie(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("cannot read a file the fuzz target needs", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

const std::vector<v1::Problem>& ShippedProblems() {
  static const std::vector<v1::Problem>* const kProblems = [] {
    const fs::path dir = fs::path(KBENCH_SOURCE_DIR) / "kernels" / "problems";
    std::vector<fs::path> files;
    std::error_code ec;
    // NAME.textproto, and NAME/problem.textproto for each folder (every
    // shipped problem is one), as the registry reads them.
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_directory(ec)) {
        files.push_back(entry.path() / "problem.textproto");
      } else if (entry.path().extension() == ".textproto") {
        files.push_back(entry);
      }
    }
    // gather_linear first: the fake tool backends serve ShippedProblems()[0]
    // with the gather_linear example.
    std::sort(
        files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
          const bool ga = a.string().find("gather_linear") != std::string::npos;
          const bool gb = b.string().find("gather_linear") != std::string::npos;
          return ga != gb ? ga : a < b;
        });
    auto* problems = new std::vector<v1::Problem>();
    for (const fs::path& f : files) {
      v1::Problem p;
      if (!google::protobuf::TextFormat::ParseFromString(ReadOrDie(f), &p)) {
        Fail("a shipped problem does not parse", f.string());
      }
      problems->push_back(std::move(p));
    }
    if (problems->empty()) Fail("no shipped problem found", dir.string());
    return problems;
  }();
  return *kProblems;
}

const std::string& ExampleKernel() {
  static const std::string* const kSource =
      new std::string(ReadOrDie(fs::path(KBENCH_SOURCE_DIR) / "kernels" /
                                "examples" / "gather_linear_naive.cu"));
  return *kSource;
}

void QuietLogs() { spdlog::set_level(spdlog::level::off); }

void Fail(absl::string_view what, absl::string_view detail) {
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n",
               static_cast<int>(what.size()), what.data());
  if (!detail.empty()) {
    const std::string shown = absl::CHexEscape(detail.substr(0, 300));
    std::fprintf(stderr, "  detail: %s%s\n", shown.c_str(),
                 detail.size() > 300 ? "..." : "");
  }
  std::abort();
}

}  // namespace fuzz
}  // namespace kbench
