// Digests of protos are deterministic (map order does not matter) and
// sensitive to every field.
#include "base/digest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {
namespace {

TEST(ReproManifestTest, DigestIsDeterministicAndSensitive) {
  v1::ShapeSet a;
  a.set_name("odd");
  v1::Shape* s = a.add_shapes();
  s->set_name("b7");
  (*s->mutable_dims())["R"] = 4;
  (*s->mutable_dims())["B"] = 7;
  (*s->mutable_dims())["H"] = 32;
  v1::ShapeSet b;
  b.set_name("odd");
  v1::Shape* t = b.add_shapes();
  t->set_name("b7");
  (*t->mutable_dims())["H"] = 32;
  (*t->mutable_dims())["B"] = 7;
  (*t->mutable_dims())["R"] = 4;
  EXPECT_EQ(ProtoDigest(a), ProtoDigest(b));
  EXPECT_EQ(ProtoDigest(a).size(), 64u);
  (*t->mutable_dims())["B"] = 8;
  EXPECT_NE(ProtoDigest(a), ProtoDigest(b));
}

// RFC 4231 test case 2 ("Jefe"), so the PRF behind hidden cases is the
// standard HMAC-SHA256 and not some other keyed hash.
TEST(HmacSha256Test, MatchesRfc4231) {
  const std::string mac = HmacSha256("Jefe", "what do ya want for nothing?");
  EXPECT_EQ(absl::BytesToHexString(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_NE(HmacSha256("Jefe", "what do ya want for nothing!"), mac);
  EXPECT_NE(HmacSha256("Jeff", "what do ya want for nothing?"), mac);
}

}  // namespace
}  // namespace kbench
