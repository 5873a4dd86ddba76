// DeviceTest: the base fixture of gpu tests that need a CUDA context. It
// skips the test without an NVIDIA GPU, else gives it a fresh
// DeviceContext. A subclass that adds to SetUp calls DeviceTest::SetUp()
// first and returns when IsSkipped() or HasFatalFailure().
//
// Ownership: owns the context for the test's life. Thread safety: gtest's.
#ifndef KBENCH_TESTS_GPU_DEVICE_TEST_H_
#define KBENCH_TESTS_GPU_DEVICE_TEST_H_

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "runner/device/device_context.h"
#include "testing/process.h"

namespace kbench {

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KB_SKIP_WITHOUT_GPU();
    auto ctx = DeviceContext::Create({});
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    ctx_ = std::move(*ctx);
  }

  std::unique_ptr<DeviceContext> ctx_;
};

}  // namespace kbench

#endif  // KBENCH_TESTS_GPU_DEVICE_TEST_H_
