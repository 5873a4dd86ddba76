// Test fixtures of the client tests (kbctl_cli_test, kbctl_session_test,
// kbctl_tools_test, mcp_server_test): kbctl run in-process with its output
// captured, and a fake kbench.v1 service served on a free loopback port.
//
// Thread safety: LoopbackServer serves on gRPC's threads; the service it
// is given must be thread-safe. The rest is for one test thread.
#ifndef KBENCH_CLIENT_CLIENT_FIXTURES_H_
#define KBENCH_CLIENT_CLIENT_FIXTURES_H_

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "client/kbctl_app.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace kbench::testing {

// What one kbctl command did.
struct KbctlResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `kbctl ARGS...` in this process (RunKbctl), capturing its streams.
inline KbctlResult RunKbctlCommand(std::vector<std::string> args) {
  args.insert(args.begin(), "kbctl");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  KbctlResult result;
  result.code = RunKbctl(static_cast<int>(args.size()), argv.data(), out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

// `service` served on 127.0.0.1 at a free port until destruction (which
// waits at most a second for calls in flight). Does not own the service.
class LoopbackServer {
 public:
  explicit LoopbackServer(grpc::Service* service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(service);
    server_ = builder.BuildAndStart();
  }
  ~LoopbackServer() {
    if (server_) {
      server_->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(1));
    }
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  // False when the port could not be bound.
  bool ok() const { return server_ != nullptr && port_ > 0; }
  // "127.0.0.1:PORT".
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace kbench::testing

#endif  // KBENCH_CLIENT_CLIENT_FIXTURES_H_
