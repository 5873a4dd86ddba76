// A stand-in for kbd's dashboard JSON API (/work/notes/dashboard-api.md:
// /api/workers, /api/jobs, /api/jobs/{id}, /api/sessions,
// /api/sessions/{id}, /api/sessions/{id}/compare, /api/sources/{digest}),
// used by the browser test until kbd serves the API itself. It answers from
// a real kbd's gRPC API (GetGpuSpecs, ListJobs, GetJob, ListSessions,
// GetSession, GetProblem; source diffs made here, since CompareRuns
// would record a turn), serves the embedded web app
// (InstallWebAssetRoutes) and forwards POST /v1/tools/{name} to kbd's HTTP
// port, so a page loaded from here sees one origin, as it would on kbd.
//
// Test-only and temporary: figures the contract leaves to the backend
// (jobs_per_minute, busy_seconds) are approximated from the jobs kbd lists.
//
// Ownership: owns its httplib server and thread. Thread safety: Start and
// the destructor on one thread; requests on the server's threads.
#ifndef KBENCH_TESTS_BROWSER_FAKE_DASHBOARD_API_H_
#define KBENCH_TESTS_BROWSER_FAKE_DASHBOARD_API_H_

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/text_diff.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "server/http_json.h"
#include "server/web_assets.h"

namespace kbench::testing {

class FakeDashboardApi {
 public:
  // kbd's gRPC address and its HTTP address ("127.0.0.1:PORT").
  FakeDashboardApi(std::string grpc_address, std::string http_address)
      : http_address_(std::move(http_address)),
        stub_(v1::Kbench::NewStub(grpc::CreateChannel(
            grpc_address, grpc::InsecureChannelCredentials()))) {}
  ~FakeDashboardApi() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  // Listens on a free loopback port; returns it (or -1).
  int Start() {
    InstallWebAssetRoutes(server_);
    Route();
    const int port = server_.bind_to_any_port("127.0.0.1");
    if (port <= 0) return -1;
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    return port;
  }

 private:
  using json = nlohmann::json;
  using Req = httplib::Request;
  using Res = httplib::Response;

  static json ToJson(const google::protobuf::Message& m) {
    google::protobuf::util::JsonPrintOptions o;
    o.preserve_proto_field_names = true;
    o.always_print_primitive_fields = true;
    std::string out;
    (void)google::protobuf::util::MessageToJsonString(m, &out, o);
    return json::parse(out);
  }

  static void ReplyGrpc(Res& res, const grpc::Status& s) {
    const int code = s.error_code() == grpc::NOT_FOUND             ? 404
                     : s.error_code() == grpc::INVALID_ARGUMENT    ? 400
                     : s.error_code() == grpc::FAILED_PRECONDITION ? 409
                                                                   : 500;
    ReplyError(res, code, code == 404 ? "NOT_FOUND" : "ERROR",
               s.error_message());
  }

  template <typename Request, typename Response, typename Method>
  grpc::Status Call(Method method, const Request& req, Response* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(30));
    return (stub_.get()->*method)(&ctx, req, resp);
  }

  // The job with its source (remembered by digest for /api/sources).
  grpc::Status GetJob(const std::string& id, v1::GetJobResponse* resp) {
    v1::GetJobRequest req;
    req.set_job_id(id);
    req.set_include_source(true);
    grpc::Status s = Call(&v1::Kbench::Stub::GetJob, req, resp);
    if (s.ok() && !resp->source().empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      sources_[resp->job().source_digest()] = resp->source();
    }
    return s;
  }

  static int IntParam(const Req& req, const char* name, int fallback) {
    int v = fallback;
    if (req.has_param(name)) {
      if (!absl::SimpleAtoi(req.get_param_value(name), &v)) return -1;
    }
    return v;
  }

  void Route() {
    server_.Get("/api/workers", [this](const Req&, Res& res) {
      v1::GetGpuSpecsResponse gpus;
      grpc::Status s =
          Call(&v1::Kbench::Stub::GetGpuSpecs, v1::GetGpuSpecsRequest(), &gpus);
      if (!s.ok()) return ReplyGrpc(res, s);
      v1::ListJobsRequest lr;
      lr.set_page_size(200);
      v1::ListJobsResponse jobs;
      s = Call(&v1::Kbench::Stub::ListJobs, lr, &jobs);
      if (!s.ok()) return ReplyGrpc(res, s);
      const int64_t now_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count();
      int queue = 0;
      for (const v1::Job& j : jobs.jobs()) {
        if (j.stage() == v1::STAGE_QUEUED || j.stage() == v1::STAGE_WAITING_GPU)
          ++queue;
      }
      json workers = json::array();
      for (const v1::WorkerGpu& g : gpus.gpus()) {
        json w = ToJson(g);
        int recent = 0;
        double busy_s = 0;
        for (const v1::Job& j : jobs.jobs()) {
          if (j.worker_id() != g.worker_id() || j.stage() != v1::STAGE_DONE)
            continue;
          busy_s += (j.finished_unix_ms() - j.created_unix_ms()) / 1000.0;
          if (now_ms - j.finished_unix_ms() < 10 * 60 * 1000) ++recent;
        }
        w["busy_seconds"] = busy_s;
        w["jobs_per_minute"] = recent / 10.0;
        workers.push_back(w);
      }
      ReplyJson(res, 200, {{"queue_depth", queue}, {"workers", workers}});
    });
    server_.Get("/api/jobs", [this](const Req& req, Res& res) {
      v1::ListJobsRequest lr;
      const int size = IntParam(req, "page_size", 20);
      if (size < 1 || size > 200) {
        return ReplyError(res, 400, "INVALID_ARGUMENT", "page_size 1..200");
      }
      lr.set_page_size(size);
      lr.set_session_id(req.get_param_value("session"));
      lr.set_page_token(req.get_param_value("page_token"));
      v1::ListJobsResponse jobs;
      grpc::Status s = Call(&v1::Kbench::Stub::ListJobs, lr, &jobs);
      if (!s.ok()) return ReplyGrpc(res, s);
      ReplyJson(res, 200, ToJson(jobs));
    });
    server_.Get(R"(/api/jobs/([^/]+))", [this](const Req& req, Res& res) {
      v1::GetJobResponse job;
      grpc::Status s = GetJob(req.matches[1], &job);
      if (!s.ok()) return ReplyGrpc(res, s);
      ReplyJson(res, 200,
                {{"job", ToJson(job.job())}, {"source", job.source()}});
    });
    server_.Get("/api/sessions", [this](const Req& req, Res& res) {
      v1::ListSessionsRequest lr;
      const int limit = IntParam(req, "limit", 50);
      if (limit < 1 || limit > 200) {
        return ReplyError(res, 400, "INVALID_ARGUMENT", "limit 1..200");
      }
      lr.set_limit(limit);
      v1::ListSessionsResponse list;
      grpc::Status s = Call(&v1::Kbench::Stub::ListSessions, lr, &list);
      if (!s.ok()) return ReplyGrpc(res, s);
      json sessions = json::array();
      for (const v1::Session& session : list.sessions()) {
        json j = ToJson(session);
        v1::GetSessionRequest gr;
        gr.set_session_id(session.id());
        v1::GetSessionResponse detail;
        double best = 0;
        std::string last_verdict = "VERDICT_UNSPECIFIED", last_tool;
        if (Call(&v1::Kbench::Stub::GetSession, gr, &detail).ok()) {
          for (const v1::Turn& t : detail.turns()) {
            last_verdict = v1::Verdict_Name(t.verdict());
            last_tool = t.tool();
            if (t.job_id().empty()) continue;
            v1::GetJobResponse job;
            if (!GetJob(t.job_id(), &job).ok()) continue;
            const v1::JobResult& r = job.job().result();
            if (r.verdict() != v1::VERDICT_PASSED) continue;
            if (r.has_timing()) best = std::max(best, r.timing().speedup());
            if (r.has_profile() && r.profile().has_timing())
              best = std::max(best, r.profile().timing().speedup());
          }
        }
        j["best_speedup"] = best;
        j["last_verdict"] = last_verdict;
        j["last_tool"] = last_tool;
        sessions.push_back(j);
      }
      ReplyJson(res, 200, {{"sessions", sessions}});
    });
    server_.Get(R"(/api/sessions/([^/]+))", [this](const Req& req, Res& res) {
      v1::GetSessionRequest gr;
      gr.set_session_id(req.matches[1]);
      v1::GetSessionResponse detail;
      grpc::Status s = Call(&v1::Kbench::Stub::GetSession, gr, &detail);
      if (!s.ok()) return ReplyGrpc(res, s);
      json problem = nullptr;
      if (!detail.session().problem().empty()) {
        v1::GetProblemRequest pr;
        pr.set_name(detail.session().problem());
        v1::GetProblemResponse p;
        if (Call(&v1::Kbench::Stub::GetProblem, pr, &p).ok()) {
          problem = ToJson(p.problem());
        }
      }
      json turns = json::array();
      for (const v1::Turn& t : detail.turns()) {
        json jt = ToJson(t);
        v1::GetJobResponse job;
        if (!t.job_id().empty() && GetJob(t.job_id(), &job).ok()) {
          jt["job"] = ToJson(job.job());
        }
        turns.push_back(jt);
      }
      ReplyJson(res, 200,
                {{"session", ToJson(detail.session())},
                 {"problem", problem},
                 {"turns", turns}});
    });
    // kbd's CompareRuns would record a turn, so the diff is made here.
    server_.Get(R"(/api/sessions/([^/]+)/compare)", [this](const Req& req,
                                                           Res& res) {
      const int a = IntParam(req, "a", -1);
      const int b = IntParam(req, "b", -1);
      if (a < 1 || b < 1) {
        return ReplyError(res, 400, "INVALID_ARGUMENT",
                          "a and b must be turn numbers");
      }
      v1::GetSessionRequest gr;
      gr.set_session_id(req.matches[1]);
      v1::GetSessionResponse detail;
      grpc::Status s = Call(&v1::Kbench::Stub::GetSession, gr, &detail);
      if (!s.ok()) return ReplyGrpc(res, s);
      v1::CompareRunsResponse cmp;
      std::string sources[2];
      const int seqs[2] = {a, b};
      for (int side = 0; side < 2; ++side) {
        const v1::Turn* turn = nullptr;
        for (const v1::Turn& t : detail.turns()) {
          if (t.seq() == seqs[side]) turn = &t;
        }
        if (turn == nullptr) {
          return ReplyError(res, 404, "NOT_FOUND", "no such turn");
        }
        v1::GetJobResponse job;
        if (turn->job_id().empty() || !GetJob(turn->job_id(), &job).ok()) {
          return ReplyError(res, 409, "FAILED_PRECONDITION",
                            "that turn ran no kernel");
        }
        sources[side] = job.source();
        v1::RunSummary* sum = side == 0 ? cmp.mutable_a() : cmp.mutable_b();
        sum->set_turn(turn->seq());
        sum->set_job_id(turn->job_id());
        sum->set_tool(turn->tool());
        sum->set_verdict(turn->verdict());
        sum->set_source_digest(turn->source_digest());
        const v1::JobResult& r = job.job().result();
        const v1::TimingReport& t =
            r.has_timing() ? r.timing() : r.profile().timing();
        sum->set_kernel_median_us(t.kernel().median_us());
        sum->set_speedup(t.speedup());
      }
      TextDiffStats stats;
      TextDiffOptions options;
      options.from_label = absl::StrCat("turn ", a);
      options.to_label = absl::StrCat("turn ", b);
      cmp.set_source_diff(UnifiedDiff(sources[0], sources[1], options, &stats));
      cmp.set_lines_added(stats.added);
      cmp.set_lines_removed(stats.removed);
      if (cmp.a().kernel_median_us() > 0 && cmp.b().kernel_median_us() > 0) {
        cmp.set_kernel_time_change_pct(
            100 * (cmp.b().kernel_median_us() - cmp.a().kernel_median_us()) /
            cmp.a().kernel_median_us());
      }
      cmp.set_speedup_change(cmp.b().speedup() - cmp.a().speedup());
      ReplyJson(res, 200, ToJson(cmp));
    });
    server_.Get(R"(/api/sources/([^/]+))", [this](const Req& req, Res& res) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sources_.find(req.matches[1]);
      if (it == sources_.end()) {
        return ReplyError(res, 404, "NOT_FOUND", "no source with that digest");
      }
      ReplyJson(res, 200, {{"digest", it->first}, {"text", it->second}});
    });
    server_.Post(R"(/v1/tools/([^/]+))", [this](const Req& req, Res& res) {
      httplib::Client c("http://" + http_address_);
      c.set_read_timeout(120);
      httplib::Headers headers;
      if (req.has_header("X-Kbench-Session")) {
        headers.emplace("X-Kbench-Session",
                        req.get_header_value("X-Kbench-Session"));
      }
      httplib::Result r =
          c.Post(req.path, headers, req.body, "application/json");
      if (!r) {
        return ReplyError(res, 502, "UNAVAILABLE", "kbd did not answer");
      }
      res.status = r->status;
      res.set_content(r->body, "application/json");
    });
  }

  std::string http_address_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
  httplib::Server server_;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, std::string> sources_;  // digest -> text
};

}  // namespace kbench::testing

#endif  // KBENCH_TESTS_BROWSER_FAKE_DASHBOARD_API_H_
