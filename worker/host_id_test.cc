// HostIdFromMachineId on machine-id files written by the test: the id is
// stable for one machine, differs between machines, never shows the raw
// machine id, and anything that is not a machine id gives no host id.
#include "worker/host_id.h"

#include <fstream>
#include <string>

#include "base/untrusted_input.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

constexpr char kMachineA[] = "0123456789abcdef0123456789abcdef";
constexpr char kMachineB[] = "fedcba9876543210fedcba9876543210";

class HostIdTest : public ::testing::Test {
 protected:
  // Writes `text` to a file of the test's folder; returns its path.
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  testing::TempDir tmp_;  // Removed with the test.
  const std::string& dir_ = tmp_.path();
};

TEST_F(HostIdTest, OneMachineOneIdThatHidesTheMachineId) {
  const std::string a = Write("a", std::string(kMachineA) + "\n");
  const std::string id = HostIdFromMachineId({a});
  EXPECT_THAT(id, MatchesRegex("h-[0-9a-f]{32}"));
  EXPECT_THAT(id, Not(HasSubstr(kMachineA)));
  EXPECT_THAT(id, Not(HasSubstr(std::string(kMachineA).substr(0, 8))));
  // The same machine id, read again or written in capitals without its
  // newline, is the same host.
  EXPECT_EQ(HostIdFromMachineId({a}), id);
  std::string upper = kMachineA;
  for (char& c : upper) c = static_cast<char>(toupper(c));
  EXPECT_EQ(HostIdFromMachineId({Write("upper", upper)}), id);
  // kbd accepts it.
  EXPECT_TRUE(ValidateSessionId(id, "worker.host_id").ok());
}

TEST_F(HostIdTest, AnotherMachineIsAnotherHost) {
  EXPECT_NE(HostIdFromMachineId({Write("a", kMachineA)}),
            HostIdFromMachineId({Write("b", kMachineB)}));
}

TEST_F(HostIdTest, TheFirstFileThatHoldsAMachineIdCounts) {
  const std::string missing = dir_ + "/missing";
  const std::string empty = Write("empty", "");
  const std::string a = Write("a", kMachineA);
  const std::string b = Write("b", kMachineB);
  EXPECT_EQ(HostIdFromMachineId({missing, empty, a, b}),
            HostIdFromMachineId({a}));
  EXPECT_EQ(HostIdFromMachineId({b, a}), HostIdFromMachineId({b}));
}

TEST_F(HostIdTest, WhatIsNotAMachineIdGivesNoHostId) {
  EXPECT_EQ(HostIdFromMachineId({}), "");
  EXPECT_EQ(HostIdFromMachineId({dir_ + "/missing"}), "");
  EXPECT_EQ(HostIdFromMachineId({dir_}), "");  // A folder.
  // What systemd writes before the id is set up (machine-id(5)).
  EXPECT_EQ(HostIdFromMachineId({Write("uninit", "uninitialized\n")}), "");
  EXPECT_EQ(HostIdFromMachineId({Write("short", "0123abcd\n")}), "");
  EXPECT_EQ(
      HostIdFromMachineId({Write("nonhex", std::string(31, 'a') + "g\n")}), "");
  // A machine id followed by more on its line, or one very long line.
  EXPECT_EQ(HostIdFromMachineId(
                {Write("more", std::string(kMachineA) + " trailing\n")}),
            "");
  EXPECT_EQ(
      HostIdFromMachineId({Write("long", std::string(1 << 20, 'a') + "\n")}),
      "");
}

}  // namespace
}  // namespace kbench
