#include "base/random_id.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kbench {
namespace {

TEST(RandomIdTest, APrefixAndTwelveHexDigitsNeverRepeatedInAThousand) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = NewRandomId("sw-");
    ASSERT_EQ(id.size(), 15u) << id;
    EXPECT_EQ(id.substr(0, 3), "sw-");
    EXPECT_EQ(id.substr(3).find_first_not_of("0123456789abcdef"),
              std::string::npos)
        << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace kbench
