// HttpCallLimiter (server/http/http_call_limiter.h): a permit holds its slot
// until destroyed or assigned over, and calls past the totals or a
// session's bound are refused, saying which.
#include "server/http/http_call_limiter.h"

#include <gtest/gtest.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"

namespace kbench {
namespace {

TEST(HttpCallLimiterTest, PermitsHoldTheirSlotUntilDestroyed) {
  HttpCallLimiter::Options o;
  o.max_gpu_calls = 2;
  o.max_compile_calls = 1;
  o.max_calls_per_session = 2;
  HttpCallLimiter limiter(o);
  absl::StatusOr<HttpCallLimiter::Permit> a = limiter.Acquire(true, "s");
  ASSERT_TRUE(a.ok());
  {
    absl::StatusOr<HttpCallLimiter::Permit> b = limiter.Acquire(true, "");
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(limiter.gpu_calls(), 2);
    EXPECT_EQ(limiter.Acquire(true, "t").status().code(),
              absl::StatusCode::kResourceExhausted);
    HttpCallLimiter::Permit moved = *std::move(b);
    EXPECT_EQ(limiter.gpu_calls(), 2);
  }
  EXPECT_EQ(limiter.gpu_calls(), 1);
  absl::StatusOr<HttpCallLimiter::Permit> c = limiter.Acquire(false, "s");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(limiter.compile_calls(), 1);
  // Session s holds two calls: its bound.
  absl::Status st = limiter.Acquire(true, "s").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(st.message(), "session s")) << st;
  *a = HttpCallLimiter::Permit();  // Released by assignment.
  EXPECT_EQ(limiter.gpu_calls(), 0);
  EXPECT_TRUE(limiter.Acquire(true, "s").ok());
}

}  // namespace
}  // namespace kbench
