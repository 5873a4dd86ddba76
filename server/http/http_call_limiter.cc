#include "server/http/http_call_limiter.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kbench {

HttpCallLimiter::Permit& HttpCallLimiter::Permit::operator=(
    Permit&& other) noexcept {
  if (this != &other) {
    if (limiter_ != nullptr) limiter_->Release(gpu_, session_);
    limiter_ = other.limiter_;
    gpu_ = other.gpu_;
    session_ = std::move(other.session_);
    other.limiter_ = nullptr;
  }
  return *this;
}

HttpCallLimiter::Permit::~Permit() {
  if (limiter_ != nullptr) limiter_->Release(gpu_, session_);
}

absl::StatusOr<HttpCallLimiter::Permit> HttpCallLimiter::Acquire(
    bool gpu, const std::string& session) {
  absl::MutexLock lock(&mu_);
  int& total = gpu ? gpu_ : compile_;
  const int max = gpu ? options_.max_gpu_calls : options_.max_compile_calls;
  if (total >= max) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "kbd is serving ", total, " ", gpu ? "GPU tool calls" : "compiles",
        " over HTTP, its most at once; retry in a few seconds (Retry-After), "
        "or use gRPC (kbctl) for many calls in parallel"));
  }
  if (!session.empty()) {
    auto it = per_session_.find(session);
    if (it != per_session_.end() &&
        it->second >= options_.max_calls_per_session) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "session ", session, " already has ", it->second,
          " tool calls in flight over HTTP, its most at once; wait for one "
          "to answer before sending another"));
    }
    ++per_session_[session];
  }
  ++total;
  Permit p;
  p.limiter_ = this;
  p.gpu_ = gpu;
  p.session_ = session;
  return p;
}

void HttpCallLimiter::Release(bool gpu, const std::string& session) {
  absl::MutexLock lock(&mu_);
  --(gpu ? gpu_ : compile_);
  if (session.empty()) return;
  auto it = per_session_.find(session);
  if (it != per_session_.end() && --it->second <= 0) per_session_.erase(it);
}

int HttpCallLimiter::gpu_calls() const {
  absl::MutexLock lock(&mu_);
  return gpu_;
}

int HttpCallLimiter::compile_calls() const {
  absl::MutexLock lock(&mu_);
  return compile_;
}

}  // namespace kbench
