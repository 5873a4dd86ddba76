// Fuzz target: the boundary checks of base/untrusted_input.h that every
// front end applies to client input: ValidateSessionId, ValidateJobId,
// ValidateFileName, ValidateUtf8, ValidateText and CheckJsonLimits. Input: the
// bytes of one field (or one JSON text).
//
// Each check is compared with an independent statement of its rule:
// - ids: 1 to 128 bytes of [A-Za-z0-9._:-] (session ids may be empty);
// - file names: empty, or 1 to 128 bytes of [A-Za-z0-9._+ -] not starting
//   with '.', '-' or ' ' nor ending with ' ';
// - UTF-8: valid as nlohmann::json's strict encoder judges it;
// - text: valid UTF-8, no control character but tab, at most the limit;
// - JSON limits: for a text that parses as JSON, CheckJsonLimits accepts it
//   exactly when its nesting depth is within the limit (bytes after a NUL,
//   which nlohmann::json ignores, may make it refuse);
// and every error message is printable ASCII, so it is safe to log.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "base/untrusted_input.h"
#include "nlohmann/json.hpp"
#include "tests/fuzz/fuzz_util.h"

namespace {

using kbench::fuzz::Fail;
using nlohmann::json;

bool IdChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

bool ValidId(absl::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    if (!IdChar(c)) return false;
  }
  return true;
}

bool ValidFileName(absl::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 128 || s.front() == '.' || s.front() == '-' ||
      s.front() == ' ' || s.back() == ' ') {
    return false;
  }
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '_' && c != '+' && c != '-' && c != ' ') {
      return false;
    }
  }
  return true;
}

bool ValidUtf8(absl::string_view s) {
  try {
    (void)json(std::string(s)).dump();  // Throws on invalid UTF-8.
  } catch (const json::type_error&) {
    return false;
  }
  return true;
}

bool ValidText(absl::string_view s, size_t max_bytes) {
  if (s.size() > max_bytes) return false;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return ValidUtf8(s);
}

// Nesting depth of arrays and objects, without recursion.
int Depth(const json& root) {
  int deepest = 0;
  std::vector<std::pair<const json*, int>> stack = {{&root, 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const json& child : *node) stack.push_back({&child, depth + 1});
  }
  return deepest;
}

void Check(const absl::Status& status, bool expected, absl::string_view what,
           absl::string_view input) {
  if (status.ok() != expected) {
    Fail(std::string(what) + (expected ? " refused" : " accepted") +
             " an input its rule " + (expected ? "allows" : "forbids"),
         input);
  }
  for (char c : status.message()) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) {
      Fail(std::string(what) + "'s message is not printable ASCII",
           status.message());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kbench::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view s = kbench::fuzz::AsText(data, size);
  Check(kbench::ValidateSessionId(s), s.empty() || ValidId(s),
        "ValidateSessionId", s);
  Check(kbench::ValidateJobId(s), ValidId(s), "ValidateJobId", s);
  Check(kbench::ValidateFileName(s), ValidFileName(s), "ValidateFileName", s);
  Check(kbench::ValidateUtf8(s, "source"), ValidUtf8(s), "ValidateUtf8", s);
  Check(kbench::ValidateText(s, 256, "stage_detail"), ValidText(s, 256),
        "ValidateText", s);

  kbench::JsonLimits limits;
  limits.max_depth = 6;  // Small, so that the fuzzer reaches it.
  limits.max_bytes = 4096;
  const absl::Status within = kbench::CheckJsonLimits(s, limits);
  const json parsed = json::parse(s.begin(), s.end(), nullptr, false);
  if (!parsed.is_discarded() && s.size() <= limits.max_bytes) {
    const bool shallow = Depth(parsed) <= limits.max_depth;
    // nlohmann's parser stops at a NUL byte outside strings and ignores the
    // rest, which CheckJsonLimits still scans: refusing there is fine.
    if (s.find('\0') == absl::string_view::npos || !shallow) {
      Check(within, shallow, "CheckJsonLimits", s);
    }
  }
  absl::StatusOr<json> untrusted = kbench::ParseUntrustedJson(s, limits);
  if (untrusted.ok() && Depth(*untrusted) > limits.max_depth) {
    Fail("ParseUntrustedJson returned JSON deeper than its limit", s);
  }
  if (!untrusted.ok() && within.ok() && !parsed.is_discarded() &&
      s.size() <= limits.max_bytes) {
    Fail("ParseUntrustedJson refused JSON within its limits", s);
  }
  return 0;
}
