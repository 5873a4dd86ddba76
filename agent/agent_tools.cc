#include "agent/agent_tools.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "agent/agent_report.h"
#include "base/error_proto.h"
#include "contract/job_defaults.h"
#include "google/protobuf/util/json_util.h"
#include "report/report_text.h"

namespace kbench {
namespace {

using nlohmann::json;

json Str(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}

json KernelSchema(bool with_shapes, bool with_arch, bool with_timing = false) {
  json props = {
      {"kernel_code",
       Str("The whole CUDA C++ kernel file: extern \"C\" __global__ entry "
           "point(s) and its `// @kb launch ...` lines (see get_problem).")},
      {"problem", Str("Problem name; default: the file's `// @kb problem` "
                      "line, else gather_linear_fp32.")},
      {"session_id", Str("Session to record the call in; default: this "
                         "client's session.")},
  };
  if (with_shapes) {
    props["shape_set"] =
        Str("Shape set to run (e.g. default, odd, large); default: the tool's. "
            "run_correctness also takes \"random\": cases drawn afresh from "
            "the problem's size classes, dims shown (submit_kernel checks "
            "hidden ones drawn the same way).");
    props["trials"] = {{"type", "integer"},
                       {"minimum", 1},
                       {"maximum", 100},
                       {"description", "Random trials per shape; default 5."}};
  }
  if (with_timing) {
    props["hot_l2"] = {
        {"type", "boolean"},
        {"description",
         "Time with the inputs warm in L2 (no flush before each sample); "
         "default false: cold L2, as a real model's layer sees it."}};
  }
  if (with_arch) {
    props["arch"] = Str("Target such as sm_90; default: the workers' GPU.");
  }
  return {{"type", "object"},
          {"properties", props},
          {"required", json::array({"kernel_code"})},
          {"additionalProperties", false}};
}

json SanitizeSchema() {
  json schema = KernelSchema(false, false);
  schema["properties"]["shape_set"] =
      Str("Shape set whose first shape to run; default: the problem's first "
          "checked set.");
  schema["properties"]["tools"] = {
      {"type", "array"},
      {"items",
       {{"type", "string"},
        {"enum", json::array({"memcheck", "racecheck", "initcheck"})}}},
      {"description",
       "compute-sanitizer tools to run; default all three (racecheck is the "
       "slowest)."}};
  return schema;
}

json ProfileSchema() {
  json schema = KernelSchema(true, false, true);
  schema["properties"]["profile_preset"] = {
      {"type", "string"},
      {"enum", json::array({"fast", "full"})},
      {"description",
       "Hardware counters to read: \"fast\" (time, DRAM, L2, occupancy, "
       "coalescing; few replay passes) or \"full\" (every figure and warp "
       "stalls); default full."}};
  return schema;
}

std::vector<AgentToolDef> MakeDefs() {
  json session_only = {
      {"type", "object"},
      {"properties", {{"session_id", Str("Session to record the call in.")}}},
      {"additionalProperties", false}};
  json problem_schema = session_only;
  problem_schema["properties"]["problem"] =
      Str("Problem name; default gather_linear_fp32.");
  json list_schema = session_only;
  list_schema["properties"]["session_id"] =
      Str("Accepted, not used: listing problems is not a session turn.");
  list_schema["properties"]["suite"] =
      Str("Only the problems of this suite (e.g. collectives, core); "
          "default: every problem.");
  json compare = {{"type", "object"},
                  {"properties",
                   {{"session_id", Str("The session; default: this client's.")},
                    {"turn_a",
                     {{"type", "integer"},
                      {"minimum", 1},
                      {"description", "Earlier turn number."}}},
                    {"turn_b",
                     {{"type", "integer"},
                      {"minimum", 1},
                      {"description", "Later turn number."}}}}},
                  {"required", json::array({"turn_a", "turn_b"})},
                  {"additionalProperties", false}};
  return {
      {"get_gpu_specs",
       "The GPU the kernel will run on: name, compute capability, SMs, "
       "clocks, memory, L2, registers and shared memory per SM and per "
       "block, thread and block limits, and the copy bandwidth and FP32 rate "
       "measured on it (datasheet peaks beside them).",
       session_only},
      {"get_problem",
       "What to implement: the statement, reference semantics, the entry "
       "point's signature, the kernel contract with a complete example, the "
       "shapes it is checked on, dtype and tolerance. Call it first.",
       problem_schema},
      {"list_problems",
       "The problems this kbench serves, by suite: each one's name, title and "
       "suites, and every suite's name. Use it to find the problems of a "
       "suite to work through; then get_problem on each.",
       list_schema},
      {"compile_kernel",
       "Compile the kernel with NVRTC (no GPU time): errors with line "
       "numbers, or registers, shared memory, stack and spills per kernel, "
       "and the checked launch plan. Cheap; use it after every edit.",
       KernelSchema(false, true)},
      {"run_correctness",
       "Compile, then run the kernel on fresh random inputs for every public "
       "shape and compare with an fp64 reference: per-trial errors and the "
       "first mismatching element.",
       KernelSchema(true, false)},
      {"profile_kernel",
       "Compile, check, then time each launch of the plan at one shape and "
       "read its hardware counters: time and share per launch, registers, "
       "shared memory, occupancy, waves, DRAM traffic, cache hit rates, "
       "coalescing, warp stalls, the floor for this shape and how far the "
       "kernel is from it, the roofline, concrete hints, and the change "
       "against this session's previous profile.",
       ProfileSchema()},
      {"submit_kernel",
       "The final answer: full correctness check, then timing against the "
       "reference (median of many runs, cold L2): speedup, launches, memory, "
       "speed of light. Ends the session.",
       KernelSchema(true, false, true)},
      {"sanitize_kernel",
       "Run the kernel once at a small shape (one trial) under NVIDIA "
       "compute-sanitizer: memcheck (out-of-bounds and misaligned accesses, "
       "hardware exceptions), racecheck (shared-memory data races) and "
       "initcheck (reads of uninitialized global memory). Each finding comes "
       "with the kernel, the source line and its text, and thread/block. "
       "Slow-ish (seconds to a minute): use it when a result is wrong or "
       "crashes and the cause is not obvious.",
       SanitizeSchema()},
      {"compare_runs",
       "Compare two turns of this session: source diff, both verdicts, and "
       "the change in kernel time and speedup.",
       compare},
  };
}

json ToJson(const google::protobuf::Message& m) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(m, &text, options);
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

AgentToolResult Refused(const absl::Status& status) {
  AgentToolResult r;
  r.is_error = true;
  r.text =
      absl::StrCat("ERROR ", StatusCodeName(static_cast<int>(status.code())),
                   ": ", status.message(), "\n");
  r.structured = {{"error",
                   {{"code", StatusCodeName(static_cast<int>(status.code()))},
                    {"message", std::string(status.message())}}}};
  return r;
}

// Checks `args` against the tool's schema: an object, known properties of
// the declared types, required ones present.
absl::Status CheckArgs(const AgentToolDef& def, const json& args) {
  if (!args.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(def.name, ": arguments must be a JSON object"));
  }
  const json& props = def.input_schema["properties"];
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (!props.contains(it.key())) {
      return absl::InvalidArgumentError(absl::StrCat(
          def.name, ": unknown argument '", it.key(), "'; known: ", [&] {
            std::string names;
            for (auto p = props.begin(); p != props.end(); ++p) {
              absl::StrAppend(&names, names.empty() ? "" : ", ", p.key());
            }
            return names;
          }()));
    }
    const json& prop = props[it.key()];
    const std::string type = prop["type"];
    if (type == "array") {
      if (!it.value().is_array()) {
        return absl::InvalidArgumentError(absl::StrCat(
            def.name, ": argument '", it.key(), "' must be an array"));
      }
      const json& items = prop["items"];
      for (const json& v : it.value()) {
        bool ok = v.is_string();
        if (ok && items.contains("enum")) {
          ok = false;
          for (const json& e : items["enum"]) ok = ok || e == v;
        }
        if (!ok) {
          return absl::InvalidArgumentError(absl::StrCat(
              def.name, ": argument '", it.key(), "' has ", v.dump(),
              "; allowed: ",
              items.contains("enum") ? items["enum"].dump() : "strings"));
        }
      }
      continue;
    }
    const bool ok = type == "string"    ? it.value().is_string()
                    : type == "boolean" ? it.value().is_boolean()
                                        : it.value().is_number_integer();
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat(def.name, ": argument '", it.key(), "' must be a",
                       type == "string"    ? " string"
                       : type == "boolean" ? " boolean"
                                           : "n integer"));
    }
    // Integers go to int32 fields: a larger value must not wrap around
    // (4294967297 trials would become 1), and the schema's bounds hold.
    if (type == "integer") {
      const int64_t lo = prop.value("minimum", int64_t{INT32_MIN});
      const int64_t hi = prop.value("maximum", int64_t{INT32_MAX});
      const bool in_range =
          it.value().is_number_unsigned()
              ? it.value().get<uint64_t>() <= static_cast<uint64_t>(hi)
              : it.value().get<int64_t>() >= lo &&
                    it.value().get<int64_t>() <= hi;
      if (!in_range) {
        return absl::InvalidArgumentError(
            absl::StrCat(def.name, ": argument '", it.key(), "' is ",
                         it.value().dump(), "; allowed: ", lo, " to ", hi));
      }
    }
    if (prop.contains("enum")) {
      bool known = false;
      for (const json& e : prop["enum"]) known = known || e == it.value();
      if (!known) {
        return absl::InvalidArgumentError(absl::StrCat(
            def.name, ": argument '", it.key(), "' has ", it.value().dump(),
            "; allowed: ", prop["enum"].dump()));
      }
    }
  }
  if (def.input_schema.contains("required")) {
    for (const json& req : def.input_schema["required"]) {
      if (!args.contains(req.get<std::string>())) {
        return absl::InvalidArgumentError(
            absl::StrCat(def.name, ": missing required argument '",
                         req.get<std::string>(), "'"));
      }
    }
  }
  return absl::OkStatus();
}

std::string GetStr(const json& args, const char* key) {
  return args.contains(key) ? args[key].get<std::string>() : "";
}

}  // namespace

const std::vector<AgentToolDef>& AgentToolDefs() {
  static const std::vector<AgentToolDef>* const kDefs =
      new std::vector<AgentToolDef>(MakeDefs());
  return *kDefs;
}

const AgentToolDef* FindAgentTool(absl::string_view name) {
  for (const AgentToolDef& d : AgentToolDefs()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

absl::StatusOr<json> RenderAgentTools(absl::string_view format) {
  json out = json::array();
  for (const AgentToolDef& d : AgentToolDefs()) {
    if (format == "openai") {
      out.push_back({{"type", "function"},
                     {"function",
                      {{"name", d.name},
                       {"description", d.description},
                       {"parameters", d.input_schema}}}});
    } else if (format == "anthropic") {
      out.push_back({{"name", d.name},
                     {"description", d.description},
                     {"input_schema", d.input_schema}});
    } else if (format == "mcp") {
      out.push_back({{"name", d.name},
                     {"description", d.description},
                     {"inputSchema", d.input_schema}});
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown format '", format, "'; use openai, anthropic or mcp"));
    }
  }
  if (format == "mcp") return json{{"tools", out}};
  return out;
}

json ToMcpToolResult(AgentToolResult result) {
  json structured = std::move(result.structured);
  if (!structured.is_object()) structured = json::object();
  return {{"content", json::array({{{"type", "text"}, {"text", result.text}}})},
          {"structuredContent", std::move(structured)},
          {"isError", result.is_error}};
}

absl::StatusOr<AgentToolResult> CallAgentTool(AgentToolBackend& backend,
                                              absl::string_view name,
                                              const json& args,
                                              const std::string& session_id) {
  const AgentToolDef* def = FindAgentTool(name);
  if (def == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown tool '", name, "'"));
  }
  if (absl::Status s = CheckArgs(*def, args); !s.ok()) return s;
  std::string session = GetStr(args, "session_id");
  if (session.empty()) session = session_id;

  AgentToolResult result;
  if (name == "get_gpu_specs") {
    absl::StatusOr<v1::GetGpuSpecsResponse> r = backend.GetGpuSpecs(session);
    if (!r.ok()) return Refused(r.status());
    result.text = AgentSpecsText(*r);
    result.structured = ToJson(*r);
    return result;
  }
  if (name == "get_problem") {
    absl::StatusOr<v1::GetProblemResponse> r =
        backend.GetProblem(GetStr(args, "problem"), session);
    if (!r.ok()) return Refused(r.status());
    result.text = AgentProblemText(*r);
    result.structured = ToJson(*r);
    return result;
  }
  if (name == "list_problems") {
    absl::StatusOr<v1::ListProblemsResponse> r =
        backend.ListProblems(GetStr(args, "suite"));
    if (!r.ok()) return Refused(r.status());
    result.text = AgentProblemListText(*r);
    result.structured = ToJson(*r);
    return result;
  }
  if (name == "compare_runs") {
    absl::StatusOr<v1::CompareRunsResponse> r = backend.CompareRuns(
        session, args["turn_a"].get<int>(), args["turn_b"].get<int>());
    if (!r.ok()) return Refused(r.status());
    result.text = AgentCompareText(*r);
    result.structured = ToJson(*r);
    return result;
  }
  v1::JobKind kind = v1::JOB_KIND_SUBMIT;
  if (name == "compile_kernel") kind = v1::JOB_KIND_COMPILE;
  if (name == "run_correctness") kind = v1::JOB_KIND_CORRECTNESS;
  if (name == "profile_kernel") kind = v1::JOB_KIND_PROFILE;
  if (name == "sanitize_kernel") kind = v1::JOB_KIND_SANITIZE;
  v1::KernelRequest request;
  request.set_source(GetStr(args, "kernel_code"));
  request.set_filename(kDefaultKernelFileName);
  request.set_problem(GetStr(args, "problem"));
  request.set_shape_set(GetStr(args, "shape_set"));
  request.set_arch(GetStr(args, "arch"));
  request.set_session_id(session);
  if (args.contains("trials")) request.set_trials(args["trials"].get<int>());
  if (args.contains("hot_l2")) request.set_hot_l2(args["hot_l2"].get<bool>());
  request.set_profile_preset(GetStr(args, "profile_preset"));
  if (args.contains("tools")) {
    for (const json& t : args["tools"]) {
      request.add_sanitize_tools(t.get<std::string>());
    }
  }
  absl::StatusOr<v1::Job> job = backend.RunJob(kind, request);
  if (!job.ok()) return Refused(job.status());
  result.text = AgentJobText(*job);
  result.structured = ToJson(*job);
  result.is_error = job->result().verdict() != v1::VERDICT_PASSED;
  return result;
}

}  // namespace kbench
