// The layer rule, checked: every #include of every source and header must
// be provided by the including target's own folder or by a target it links
// (directly or through its dependencies), and third-party headers (gRPC,
// httplib, SQLite, CUDA, CLI11, JSON, GoogleTest) only where that library
// is linked. The targets, their sources and their links come from the
// manifest CMake writes at configure time (cmake/KbenchTargets.cmake), so
// CMake's dependencies are the one statement of the rule and this test
// makes the code keep to it: a header that compiles only because the
// include root is shared fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

struct Target {
  std::string kind;    // library, binary or test
  std::string folder;  // relative to the source root
  std::vector<std::string> sources;
  std::vector<std::string> deps;
};

std::map<std::string, Target> ReadManifest() {
  std::map<std::string, Target> out;
  std::ifstream in(KBENCH_LAYERS_FILE);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, '|');
    if (f.size() != 5) continue;
    Target t{f[1], f[2], absl::StrSplit(f[3], ' ', absl::SkipEmpty()),
             absl::StrSplit(f[4], ' ', absl::SkipEmpty())};
    out[f[0]] = t;
  }
  return out;
}

// Third-party headers and the dependency that provides each.
std::string ExternalOwner(const std::string& header) {
  static const std::vector<std::pair<std::string, std::string>> kPrefixes = {
      {"grpcpp/", "gRPC::grpc++"},
      {"grpc/", "gRPC::grpc++"},
      {"httplib.h", "PkgConfig::HTTPLIB"},
      {"sqlite3.h", "SQLite::SQLite3"},
      {"nvrtc.h", "CUDA::nvrtc"},
      {"cupti", "CUDA::cupti"},
      {"cublasLt", "CUDA::cublasLt"},
      {"cublas", "CUDA::cublas"},
      {"cuda.h", "CUDA::cudart_static"},
      {"cuda_runtime", "CUDA::cudart_static"},
      {"CLI/", "CLI11::CLI11"},
      {"nlohmann/", "nlohmann_json::nlohmann_json"},
      {"gtest/", "GTest::gtest"},
      {"gmock/", "GTest::gtest"},
  };
  for (const auto& [prefix, dep] : kPrefixes) {
    if (absl::StartsWith(header, prefix)) return dep;
  }
  return "";
}

class LayeringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    targets_ = ReadManifest();
    ASSERT_GT(targets_.size(), 10u)
        << "no layer manifest at " << KBENCH_LAYERS_FILE;
    for (const auto& [name, t] : targets_) {
      if (t.kind == "library") library_of_folder_[t.folder] = name;
    }
  }

  // `name` and everything it links, transitively.
  std::set<std::string> Closure(const std::string& name) const {
    std::set<std::string> seen;
    std::vector<std::string> todo = {name};
    while (!todo.empty()) {
      const std::string n = todo.back();
      todo.pop_back();
      if (!seen.insert(n).second) continue;
      auto it = targets_.find(n);
      if (it == targets_.end()) continue;
      for (const std::string& d : it->second.deps) todo.push_back(d);
    }
    return seen;
  }

  // The library whose folder holds `header`, or "" for a header outside
  // every library folder.
  std::string LibraryOf(const std::string& header) const {
    auto it = library_of_folder_.find(fs::path(header).parent_path().string());
    return it == library_of_folder_.end() ? "" : it->second;
  }

  // The problems with one file's includes, owned by target `name`.
  void CheckFile(const std::string& name, const std::string& file,
                 const std::set<std::string>& closure,
                 std::vector<std::string>* problems) const {
    std::ifstream in(fs::path(KBENCH_SOURCE_DIR) / file);
    CheckLines(name, file, in, closure, problems);
  }

  // CheckFile on `in`, read as the text of `file`.
  void CheckLines(const std::string& name, const std::string& file,
                  std::istream& in, const std::set<std::string>& closure,
                  std::vector<std::string>* problems) const {
    static const std::regex kInclude(
        R"re(^\s*#\s*include\s*([<"])([^>"]+)[>"])re");
    std::string line;
    const std::string own_folder = fs::path(file).parent_path().string();
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, kInclude)) continue;
      const std::string header = m[2];
      std::string need;
      if (absl::StartsWith(header, "kbench/v1/")) {
        need =
            absl::EndsWith(header, ".grpc.pb.h") ? "kb_proto_grpc" : "kb_proto";
      } else if (m[1] == "\"" && fs::path(header).parent_path() == own_folder) {
        continue;
      } else if (!(need = LibraryOf(header)).empty()) {
      } else if (!(need = ExternalOwner(header)).empty()) {
      } else {
        continue;  // the C++ library, absl, spdlog, protobuf, tests' own
      }
      if (!closure.count(need)) {
        problems->push_back(file + " (" + name + ") includes " + header +
                            ", which needs " + need + "; " + name +
                            " does not link it");
      }
    }
  }

  std::map<std::string, Target> targets_;
  std::map<std::string, std::string> library_of_folder_;
};

TEST_F(LayeringTest, EveryIncludeIsProvidedByALinkedTarget) {
  std::vector<std::string> problems;
  int files = 0;
  for (const auto& [name, t] : targets_) {
    std::set<std::string> closure = Closure(name);
    // Protos come in through kb_base; the gRPC stubs link the messages.
    if (closure.count("kb_proto_grpc") || closure.count("kbtest_proto_grpc")) {
      closure.insert({"kb_proto", "kbtest_proto", "gRPC::grpc++"});
    }
    std::vector<std::string> files_of_target;
    for (const std::string& s : t.sources) {
      if (fs::exists(fs::path(KBENCH_SOURCE_DIR) / s)) {
        files_of_target.push_back(s);
      }
    }
    if (t.kind == "library") {
      for (const auto& e :
           fs::directory_iterator(fs::path(KBENCH_SOURCE_DIR) / t.folder)) {
        const std::string f = e.path().filename().string();
        // Test-only headers (*_fixtures.h) belong to the folder's tests.
        if (absl::EndsWith(f, ".h") && !absl::EndsWith(f, "_fixtures.h")) {
          files_of_target.push_back(t.folder + "/" + f);
        }
      }
    }
    for (const std::string& f : files_of_target) {
      CheckFile(name, f, closure, &problems);
      ++files;
    }
  }
  EXPECT_GT(files, 200);
  EXPECT_TRUE(problems.empty()) << absl::StrJoin(problems, "\n");
}

// The rule of the house, as links: the core sees neither gRPC nor httplib,
// nor the text and agent layers; the runner never sees the server or the
// worker; nothing below the front ends links them.
TEST_F(LayeringTest, TheLayerRuleHoldsInTheLinks) {
  const std::map<std::string, std::vector<std::string>> kForbidden = {
      {"kb_server_core",
       {"gRPC::grpc++", "PkgConfig::HTTPLIB", "kb_report", "kb_agent",
        "kb_server_grpc", "kb_server_http", "kb_proto_grpc"}},
      {"kb_runner",
       {"kb_server_core", "kb_server_store", "kb_worker", "gRPC::grpc++",
        "PkgConfig::HTTPLIB"}},
      {"kb_contract", {"kb_compiler", "kb_analysis", "kb_report"}},
      {"kb_analysis", {"kb_report", "kb_agent"}},
      {"kb_report", {"kb_agent"}},
      {"kb_base", {"kb_contract", "gRPC::grpc++"}},
      {"kb_worker", {"kb_server_core", "kb_runner_device", "kb_runner"}},
  };
  for (const auto& [target, forbidden] : kForbidden) {
    ASSERT_TRUE(targets_.count(target)) << target;
    const std::set<std::string> closure = Closure(target);
    for (const std::string& f : forbidden) {
      EXPECT_FALSE(closure.count(f)) << target << " links " << f;
    }
  }
}

// The check itself can fail: a header of a higher layer, included from a
// lower one, is reported.
TEST_F(LayeringTest, AnIncludeFromAHigherLayerIsReported) {
  std::istringstream probe(
      "#include \"server/core/job_service.h\"\n#include <httplib.h>\n"
      "#include \"base/paths.h\"\n");
  std::vector<std::string> problems;
  CheckLines("kb_base", "base/probe.h", probe, Closure("kb_base"), &problems);
  ASSERT_EQ(problems.size(), 2u) << absl::StrJoin(problems, "\n");
  EXPECT_TRUE(absl::StrContains(problems[0], "needs kb_server_core"));
  EXPECT_TRUE(absl::StrContains(problems[1], "needs PkgConfig::HTTPLIB"));
}

}  // namespace
}  // namespace kbench
