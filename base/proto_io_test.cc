#include "base/proto_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

// Both ends of a socketpair or pipe, closed on destruction.
struct FdPair {
  int r = -1;  // Read end.
  int w = -1;  // Write end.
  ~FdPair() {
    CloseR();
    CloseW();
  }
  void CloseR() {
    if (r >= 0) close(r);
    r = -1;
  }
  void CloseW() {
    if (w >= 0) close(w);
    w = -1;
  }
};

void MakeSocketPair(FdPair* p) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  p->r = sv[0];
  p->w = sv[1];
}

void MakePipe(FdPair* p) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  p->r = fds[0];
  p->w = fds[1];
}

void WriteRaw(int fd, const std::string& bytes) {
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()),
            static_cast<ssize_t>(bytes.size()));
}

v1::RunnerRequest SampleRequest() {
  v1::RunnerRequest req;
  req.mutable_job()->set_job_id("job-42");
  req.mutable_job()->set_source("__global__ void k() {}");
  req.mutable_job()->set_kind(v1::JOB_KIND_SUBMIT);
  req.mutable_job()->set_seed(12345);
  return req;
}

TEST(ProtoIoTest, RoundTripOverSocketPair) {
  FdPair p;
  MakeSocketPair(&p);
  const v1::RunnerRequest sent = SampleRequest();
  ASSERT_TRUE(WriteMessage(p.w, sent).ok());
  v1::RunnerResponse progress;
  progress.mutable_progress()->set_detail("trial 1/5");
  ASSERT_TRUE(WriteMessage(p.w, progress).ok());

  v1::RunnerRequest got;
  ASSERT_TRUE(ReadMessage(p.r, &got).ok());
  EXPECT_EQ(got.job().job_id(), "job-42");
  EXPECT_EQ(got.job().source(), "__global__ void k() {}");
  EXPECT_EQ(got.job().kind(), v1::JOB_KIND_SUBMIT);
  EXPECT_EQ(got.job().seed(), 12345u);
  v1::RunnerResponse got_progress;
  ASSERT_TRUE(ReadMessage(p.r, &got_progress).ok());
  EXPECT_EQ(got_progress.progress().detail(), "trial 1/5");
}

TEST(ProtoIoTest, WireFormatIsLittleEndianLengthThenBytes) {
  FdPair p;
  MakePipe(&p);
  const v1::RunnerRequest sent = SampleRequest();
  ASSERT_TRUE(WriteMessage(p.w, sent).ok());
  p.CloseW();
  std::string bytes;
  char buf[4096];
  ssize_t n;
  while ((n = read(p.r, buf, sizeof(buf))) > 0) bytes.append(buf, n);
  const std::string body = sent.SerializeAsString();
  ASSERT_EQ(bytes.size(), 4 + body.size());
  const uint32_t len = static_cast<unsigned char>(bytes[0]) |
                       (static_cast<unsigned char>(bytes[1]) << 8) |
                       (static_cast<unsigned char>(bytes[2]) << 16) |
                       (static_cast<unsigned char>(bytes[3]) << 24);
  EXPECT_EQ(len, body.size());
  EXPECT_EQ(bytes.substr(4), body);
}

TEST(ProtoIoTest, EmptyMessageRoundTrips) {
  FdPair p;
  MakeSocketPair(&p);
  ASSERT_TRUE(WriteMessage(p.w, v1::RunnerResponse()).ok());
  v1::RunnerResponse got;
  got.mutable_progress()->set_detail("stale");
  ASSERT_TRUE(ReadMessage(p.r, &got).ok());
  EXPECT_FALSE(got.has_progress());
}

// 8 MiB does not fit in a pipe or socket buffer: the writer loops over
// partial writes while a reader drains the other end.
void LargeRoundTrip(FdPair* p) {
  v1::RunnerRequest sent;
  std::string cubin(8 << 20, '\0');
  for (size_t i = 0; i < cubin.size(); ++i) {
    cubin[i] = static_cast<char>((i * 131) % 251);
  }
  sent.mutable_job()->set_cubin(cubin);
  sent.mutable_job()->set_job_id("big");
  absl::Status write_status;
  std::thread writer([&] { write_status = WriteMessage(p->w, sent); });
  v1::RunnerRequest got;
  const absl::Status read_status = ReadMessage(p->r, &got);
  writer.join();
  ASSERT_TRUE(write_status.ok()) << write_status;
  ASSERT_TRUE(read_status.ok()) << read_status;
  EXPECT_EQ(got.job().job_id(), "big");
  EXPECT_EQ(got.job().cubin().size(), cubin.size());
  EXPECT_TRUE(got.job().cubin() == cubin);
}

TEST(ProtoIoTest, LargeMessageOverPipe) {
  FdPair p;
  MakePipe(&p);
  LargeRoundTrip(&p);
}

TEST(ProtoIoTest, LargeMessageOverSocketPair) {
  FdPair p;
  MakeSocketPair(&p);
  LargeRoundTrip(&p);
}

TEST(ProtoIoTest, CleanEofBeforeMessageIsOutOfRange) {
  FdPair p;
  MakeSocketPair(&p);
  ASSERT_TRUE(WriteMessage(p.w, SampleRequest()).ok());
  p.CloseW();
  v1::RunnerRequest got;
  ASSERT_TRUE(ReadMessage(p.r, &got).ok());
  const absl::Status st = ReadMessage(p.r, &got);
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(st.message(), "end of stream");
}

TEST(ProtoIoTest, EofInsideHeaderIsDataLoss) {
  FdPair p;
  MakePipe(&p);
  WriteRaw(p.w, std::string("\x05\x00", 2));
  p.CloseW();
  v1::RunnerRequest got;
  const absl::Status st = ReadMessage(p.r, &got);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(st.message(), HasSubstr("2 of 4 bytes"));
}

TEST(ProtoIoTest, EofInsideBodyIsDataLoss) {
  FdPair p;
  MakeSocketPair(&p);
  const std::string body = SampleRequest().SerializeAsString();
  std::string frame(4, '\0');
  frame[0] = static_cast<char>(body.size());
  frame += body.substr(0, body.size() / 2);
  WriteRaw(p.w, frame);
  p.CloseW();
  v1::RunnerRequest got;
  const absl::Status st = ReadMessage(p.r, &got);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(st.message(), HasSubstr("ended inside a message"));
  EXPECT_THAT(st.message(),
              HasSubstr(absl::StrCat(body.size() / 2, " of ", body.size())));
}

TEST(ProtoIoTest, OversizeLengthIsDataLoss) {
  FdPair p;
  MakeSocketPair(&p);
  // 0x20000001 = 512 MiB + 1.
  WriteRaw(p.w, std::string("\x01\x00\x00\x20", 4));
  v1::RunnerRequest got;
  const absl::Status st = ReadMessage(p.r, &got);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(st.message(), HasSubstr("536870913"));
  EXPECT_THAT(st.message(), HasSubstr("512 MiB"));
}

TEST(ProtoIoTest, GarbageBodyIsDataLoss) {
  FdPair p;
  MakePipe(&p);
  WriteRaw(p.w, std::string("\x03\x00\x00\x00\xff\xff\xff", 7));
  v1::RunnerRequest got;
  const absl::Status st = ReadMessage(p.r, &got);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(st.message(), HasSubstr("kbench.v1.RunnerRequest"));
}

TEST(ProtoIoTest, WriteToClosedSocketIsUnavailable) {
  FdPair p;
  MakeSocketPair(&p);
  p.CloseR();
  const absl::Status st = WriteMessage(p.w, SampleRequest());
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("runner pipe closed"));
}

// Reaching the end of this test proves SIGPIPE did not kill the process.
TEST(ProtoIoTest, WriteToClosedPipeIsUnavailableWithoutSigpipe) {
  FdPair p;
  MakePipe(&p);
  p.CloseR();
  const absl::Status st = WriteMessage(p.w, SampleRequest());
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("runner pipe closed"));
  EXPECT_THAT(st.message(), HasSubstr("Broken pipe"));
  // The SIGPIPE was consumed, not left pending for the thread.
  sigset_t pending;
  sigemptyset(&pending);
  ASSERT_EQ(sigpending(&pending), 0);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

TEST(ProtoIoTest, WaitReadableTimesOutThenSeesData) {
  FdPair p;
  MakeSocketPair(&p);
  absl::StatusOr<bool> ready = WaitReadable(p.r, 30);
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_FALSE(*ready);
  ASSERT_TRUE(WriteMessage(p.w, SampleRequest()).ok());
  ready = WaitReadable(p.r, 1000);
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_TRUE(*ready);
}

TEST(ProtoIoTest, WaitReadableSeesHangUp) {
  FdPair p;
  MakePipe(&p);
  p.CloseW();
  absl::StatusOr<bool> ready = WaitReadable(p.r, 1000);
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_TRUE(*ready);
}

TEST(ProtoIoTest, WaitReadableOnClosedFdIsInvalidArgument) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  close(fds[0]);
  close(fds[1]);
  absl::StatusOr<bool> ready = WaitReadable(fds[0], 10);
  EXPECT_EQ(ready.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kbench
