// `kbctl tools --format openai|anthropic|mcp`, in-process: the output is
// pretty JSON of the shape each function-calling API expects, checked by a
// validator written here (itself tested on broken input); an unknown format
// is a usage error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/agent_tools.h"
#include "client/client_fixtures.h"
#include "nlohmann/json.hpp"

namespace kbench {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using Result = ::kbench::testing::KbctlResult;
Result Kbctl(std::vector<std::string> args) {
  return ::kbench::testing::RunKbctlCommand(std::move(args));
}

// Problems with `schema` as a tool's parameters: a JSON Schema object of
// type "object" whose "properties" is an object of typed, described
// properties, and whose "required" names only properties. Empty when valid.
std::vector<std::string> SchemaProblems(const std::string& where,
                                        const json& schema) {
  std::vector<std::string> problems;
  if (!schema.is_object()) return {where + ": schema is not an object"};
  if (schema.value("type", json()) != "object") {
    problems.push_back(where + ": schema type is not \"object\"");
  }
  if (!schema.contains("properties") || !schema["properties"].is_object()) {
    problems.push_back(where + ": \"properties\" is not an object");
    return problems;
  }
  static const std::set<std::string> kTypes = {"string",  "integer", "number",
                                               "boolean", "array",   "object"};
  for (auto it = schema["properties"].begin(); it != schema["properties"].end();
       ++it) {
    const json& p = it.value();
    if (!p.is_object() || !p.contains("type") || !p["type"].is_string() ||
        kTypes.count(p["type"].get<std::string>()) == 0) {
      problems.push_back(where + ": property " + it.key() +
                         " has no valid \"type\"");
    }
    if (!p.is_object() || !p.contains("description") ||
        !p["description"].is_string() ||
        p["description"].get<std::string>().empty()) {
      problems.push_back(where + ": property " + it.key() +
                         " has no description");
    }
  }
  if (schema.contains("required")) {
    if (!schema["required"].is_array()) {
      problems.push_back(where + ": \"required\" is not an array");
    } else {
      for (const json& name : schema["required"]) {
        if (!name.is_string() ||
            !schema["properties"].contains(name.get<std::string>())) {
          problems.push_back(where + ": required " + name.dump() +
                             " is not a property");
        }
      }
    }
  }
  if (schema.contains("additionalProperties") &&
      !schema["additionalProperties"].is_boolean()) {
    problems.push_back(where + ": \"additionalProperties\" is not a boolean");
  }
  return problems;
}

// Problems with one tool's name, description and schema.
std::vector<std::string> ToolProblems(const json& name, const json& description,
                                      const json& schema) {
  static const std::regex kName("^[a-z0-9_]{1,64}$");
  const std::string where = name.is_string() ? name.get<std::string>() : "?";
  std::vector<std::string> problems;
  if (!name.is_string() || !std::regex_match(name.get<std::string>(), kName)) {
    problems.push_back("bad tool name " + name.dump());
  }
  if (!description.is_string() || description.get<std::string>().empty()) {
    problems.push_back(where + ": description is not a non-empty string");
  }
  for (std::string& p : SchemaProblems(where, schema)) {
    problems.push_back(std::move(p));
  }
  return problems;
}

// The OpenAI function-calling shape:
// [{"type":"function","function":{name, description, parameters}}].
std::vector<std::string> OpenAiProblems(const json& tools) {
  if (!tools.is_array() || tools.empty()) return {"not a non-empty array"};
  std::vector<std::string> problems;
  for (const json& t : tools) {
    if (!t.is_object() || t.value("type", json()) != "function" ||
        !t.contains("function") || !t["function"].is_object()) {
      problems.push_back(
          "entry is not {\"type\":\"function\",\"function\":{}}");
      continue;
    }
    const json& f = t["function"];
    for (std::string& p :
         ToolProblems(f.value("name", json()), f.value("description", json()),
                      f.value("parameters", json()))) {
      problems.push_back(std::move(p));
    }
  }
  return problems;
}

// The Anthropic shape: [{name, description, input_schema}].
std::vector<std::string> AnthropicProblems(const json& tools) {
  if (!tools.is_array() || tools.empty()) return {"not a non-empty array"};
  std::vector<std::string> problems;
  for (const json& t : tools) {
    if (!t.is_object()) {
      problems.push_back("entry is not an object");
      continue;
    }
    for (std::string& p :
         ToolProblems(t.value("name", json()), t.value("description", json()),
                      t.value("input_schema", json()))) {
      problems.push_back(std::move(p));
    }
  }
  return problems;
}

// The MCP tools/list result: {"tools": [{name, description, inputSchema}]}.
std::vector<std::string> McpProblems(const json& result) {
  if (!result.is_object() || !result.contains("tools") ||
      !result["tools"].is_array() || result["tools"].empty()) {
    return {"not {\"tools\": [...]}"};
  }
  std::vector<std::string> problems;
  for (const json& t : result["tools"]) {
    for (std::string& p :
         ToolProblems(t.value("name", json()), t.value("description", json()),
                      t.value("inputSchema", json()))) {
      problems.push_back(std::move(p));
    }
  }
  return problems;
}

std::vector<std::string> Names(const json& tools, const char* object_key) {
  std::vector<std::string> names;
  for (const json& t : tools) {
    names.push_back(object_key == nullptr
                        ? t["name"].get<std::string>()
                        : t[object_key]["name"].get<std::string>());
  }
  return names;
}

std::vector<std::string> DefNames() {
  std::vector<std::string> names;
  for (const AgentToolDef& d : AgentToolDefs()) names.push_back(d.name);
  return names;
}

// Parses kbctl's stdout, checking that it is pretty-printed (2 spaces).
json ParsePretty(const Result& r) {
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  json parsed = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(parsed.is_discarded()) << r.out;
  if (!parsed.is_discarded()) {
    EXPECT_EQ(r.out, parsed.dump(2) + "\n");
  }
  return parsed;
}

TEST(KbctlToolsTest, OpenAiFormatIsTheFunctionCallingShape) {
  const json tools = ParsePretty(Kbctl({"tools", "--format", "openai"}));
  EXPECT_THAT(OpenAiProblems(tools), IsEmpty());
  ASSERT_EQ(tools.size(), 9u);
  EXPECT_EQ(Names(tools, "function"), DefNames());
  for (size_t i = 0; i < tools.size(); ++i) {
    EXPECT_EQ(tools[i]["function"]["parameters"],
              AgentToolDefs()[i].input_schema);
  }
  EXPECT_EQ(tools[3]["function"]["name"], "compile_kernel");
  EXPECT_EQ(tools[3]["function"]["parameters"]["required"],
            json::array({"kernel_code"}));
}

TEST(KbctlToolsTest, OpenAiIsTheDefaultFormat) {
  EXPECT_EQ(ParsePretty(Kbctl({"tools"})),
            ParsePretty(Kbctl({"tools", "--format", "openai"})));
}

TEST(KbctlToolsTest, AnthropicFormatHasInputSchemas) {
  const json tools = ParsePretty(Kbctl({"tools", "--format", "anthropic"}));
  EXPECT_THAT(AnthropicProblems(tools), IsEmpty());
  EXPECT_EQ(Names(tools, nullptr), DefNames());
  EXPECT_FALSE(tools[0].contains("type"));
}

TEST(KbctlToolsTest, McpFormatIsAToolsListResult) {
  const json result = ParsePretty(Kbctl({"tools", "--format", "mcp"}));
  EXPECT_THAT(McpProblems(result), IsEmpty());
  EXPECT_EQ(Names(result["tools"], nullptr), DefNames());
}

TEST(KbctlToolsTest, UnknownFormatIsAUsageError) {
  const Result r = Kbctl({"tools", "--format", "gemini"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr("kbctl: INVALID_ARGUMENT: unknown format "
                               "'gemini'; use openai, anthropic or mcp"));
}

TEST(KbctlToolsTest, TheValidatorsCatchBrokenDefinitions) {
  const json good = ParsePretty(Kbctl({"tools", "--format", "openai"}));
  EXPECT_THAT(OpenAiProblems(json::object()), ::testing::Not(IsEmpty()));

  json bad = good;
  bad[0]["function"]["name"] = "Get GPU specs";
  EXPECT_THAT(OpenAiProblems(bad),
              ::testing::Contains(HasSubstr("bad tool name")));
  bad = good;
  bad[1]["type"] = "tool";
  EXPECT_THAT(OpenAiProblems(bad), ::testing::Not(IsEmpty()));
  bad = good;
  bad[2]["function"]["description"] = "";
  EXPECT_THAT(OpenAiProblems(bad),
              ::testing::Contains(HasSubstr("description")));
  bad = good;
  bad[2]["function"]["parameters"]["required"].push_back("missing");
  EXPECT_THAT(OpenAiProblems(bad),
              ::testing::Contains(HasSubstr("\"missing\" is not a property")));
  bad = good;
  bad[3]["function"]["parameters"]["properties"] = json::array();
  EXPECT_THAT(OpenAiProblems(bad),
              ::testing::Contains(HasSubstr("\"properties\" is not")));
  bad = good;
  bad[3]["function"]["parameters"]["type"] = "array";
  EXPECT_THAT(OpenAiProblems(bad), ::testing::Contains(HasSubstr("type")));
  bad = good;
  bad[3]["function"]["parameters"]["properties"]["kernel_code"]["type"] =
      "text";
  EXPECT_THAT(OpenAiProblems(bad),
              ::testing::Contains(HasSubstr("kernel_code has no valid")));

  const json mcp = ParsePretty(Kbctl({"tools", "--format", "mcp"}));
  json bad_mcp = mcp;
  bad_mcp["tools"][0].erase("inputSchema");
  EXPECT_THAT(McpProblems(bad_mcp), ::testing::Not(IsEmpty()));
  EXPECT_THAT(AnthropicProblems(mcp), ::testing::Not(IsEmpty()));
}

}  // namespace
}  // namespace kbench
