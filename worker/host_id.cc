#include "worker/host_id.h"

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/digest.h"

namespace kbench {
namespace {

// What makes kbench's host id differ from the raw machine id and from
// what other applications derive from it.
constexpr char kAppKey[] = "kbench.v1.host_id";

// A machine id: 32 lowercase or uppercase hex digits, as machine-id(5)
// writes it (lowercase). Anything else (empty, "uninitialized", a file of
// garbage) is not one.
bool IsMachineId(const std::string& s) {
  if (s.size() != 32) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> DefaultMachineIdFiles() {
  return {"/etc/machine-id", "/var/lib/dbus/machine-id"};
}

std::string HostIdFromMachineId(const std::vector<std::string>& files) {
  for (const std::string& path : files) {
    std::ifstream in(path);
    // A machine id is 33 bytes with its newline: read no more than a line
    // of a sane length, whatever the file holds.
    char buf[128] = {0};
    in.getline(buf, sizeof(buf));
    const std::string id =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(buf));
    if (!IsMachineId(id)) continue;
    // Keyed by the machine id, over kbench's name, as systemd derives an
    // application-specific id.
    const std::string mac = HmacSha256(id, kAppKey);
    return absl::StrCat("h-", absl::BytesToHexString(mac.substr(0, 16)));
  }
  return "";
}

}  // namespace kbench
