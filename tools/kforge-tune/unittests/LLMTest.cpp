//===- LLMTest.cpp - request bodies, response parsing, schedule extraction --===//

#include "llm/LLMClient.h"
#include "llm/LLMPolicy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

using namespace kforge::tune;

TEST(LLMClient, RequestBodies) {
  LLMConfig openai;
  openai.model = "m";
  std::vector<ChatMessage> messages = {{"system", "be brief"}, {"user", "hi"}};
  nlohmann::json a = nlohmann::json::parse(buildRequestBody(openai, messages));
  EXPECT_EQ(a["model"], "m");
  ASSERT_EQ(a["messages"].size(), 2u);
  EXPECT_EQ(a["messages"][0]["role"], "system");
  EXPECT_FALSE(a.contains("system"));

  LLMConfig anthropic = openai;
  anthropic.api = "anthropic";
  nlohmann::json b = nlohmann::json::parse(buildRequestBody(anthropic, messages));
  EXPECT_EQ(b["system"], "be brief"); // Anthropic takes the system prompt apart from the messages
  ASSERT_EQ(b["messages"].size(), 1u);
  EXPECT_EQ(b["messages"][0]["role"], "user");
}

TEST(LLMClient, ResponseParsing) {
  LLMConfig openai, anthropic;
  anthropic.api = "anthropic";
  Completion c;
  std::string error;
  ASSERT_TRUE(parseResponseBody(
      openai, R"({"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}})", c,
      error));
  EXPECT_EQ(c.text, "x");
  EXPECT_EQ(c.promptTokens, 3);
  EXPECT_EQ(c.completionTokens, 4);
  ASSERT_TRUE(parseResponseBody(
      anthropic, R"({"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"usage":{"input_tokens":5}})",
      c, error));
  EXPECT_EQ(c.text, "ab");
  EXPECT_EQ(c.promptTokens, 5);
  EXPECT_FALSE(parseResponseBody(openai, R"({"choices": [{"message": {"content": "{\"sche)", c, error));
  EXPECT_NE(error.find("not a JSON object"), std::string::npos);
  EXPECT_FALSE(parseResponseBody(openai, R"({"error": {"message": "overloaded"}})", c, error));
  EXPECT_NE(error.find("no choices"), std::string::npos);
}

TEST(LLMPolicy, ExtractsSchedulesFromRepliesOfEveryShape) {
  std::vector<llvm::json::Value> schedules;
  std::vector<std::string> whys;
  std::string error;
  ASSERT_TRUE(extractSchedules("Sure:\n```json\n{\"schedules\": [{\"why\": \"w\", \"actions\": []}, []]}\n```\nok",
                               schedules, whys, error))
      << error;
  EXPECT_EQ(schedules.size(), 2u);
  EXPECT_EQ(whys[0], "w");
  schedules.clear();
  whys.clear();
  ASSERT_TRUE(extractSchedules("{\"actions\": [{\"kind\": \"vectorize\", \"params\": {}}]}", schedules, whys, error));
  EXPECT_EQ(schedules.size(), 1u);
  schedules.clear();
  whys.clear();
  ASSERT_TRUE(extractSchedules("[{\"kind\": \"vectorize\", \"params\": {}}]", schedules, whys, error));
  EXPECT_EQ(schedules.size(), 1u);
  EXPECT_FALSE(extractSchedules("I would tile it.", schedules, whys, error));
  EXPECT_EQ(error, "the reply holds no JSON");
  EXPECT_FALSE(extractSchedules("{\"schedules\": [}", schedules, whys, error));
  EXPECT_NE(error.find("does not parse"), std::string::npos);
  EXPECT_FALSE(extractSchedules("{\"plan\": 1}", schedules, whys, error));
}

TEST(LLMPolicy, ExtractsAWholeTransformScript) {
  std::string script = "module attributes {transform.with_named_sequence} {\n"
                       "  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.consumed}) {\n"
                       "    transform.yield\n  }\n}\n";
  EXPECT_EQ(extractScript("Here:\n```mlir\n" + script + "```\nDone."), script);
  EXPECT_EQ(extractScript("```mlir\nfunc.func @f() { return }\n```"), ""); // no transform entry point
  EXPECT_EQ(extractScript("{\"actions\": []}"), "");
}

TEST(LLMClient, RedactsTheKeyAndEchoedAuthorizationHeaders) {
  const std::string key = "sk-kforge-unit-secret-0123456789";
  // A 401 body that echoes the request's headers, as some proxies and servers do.
  std::string body = "{\"error\": \"bad key\", \"headers\": {\"Authorization\": \"Bearer " + key +
                     "\", \"X-Api-Key\": \"" + key + "\"}, \"seen\": \"" + key + "\"}\n" +
                     "Authorization: Bearer other-token-42\r\nx-api-key: another-7\r\napi_key=query-secret&x=1";
  std::string clean = redactSecrets(body, key);
  EXPECT_EQ(clean.find(key), std::string::npos) << clean;
  EXPECT_EQ(clean.find("other-token-42"), std::string::npos) << clean;
  EXPECT_EQ(clean.find("another-7"), std::string::npos) << clean;
  EXPECT_EQ(clean.find("query-secret"), std::string::npos) << clean;
  EXPECT_NE(clean.find("\"Authorization\": \"Bearer [redacted]\""), std::string::npos) << clean;
  EXPECT_NE(clean.find("\"error\": \"bad key\""), std::string::npos) << clean; // the rest stays readable
  EXPECT_NE(clean.find("&x=1"), std::string::npos) << clean;
  EXPECT_EQ(redactSecrets(clean, key), clean); // scrubbing twice changes nothing
  // A key cut in half by a length limit would leak its prefix: redaction runs on the whole text first.
  EXPECT_EQ(redactSecrets("token " + key.substr(0, 10), key), "token " + key.substr(0, 10));
  // Ordinary words that merely start like a header name are kept.
  EXPECT_EQ(redactSecrets("authorization failed; bearers of news", ""), "authorization failed; bearers of news");
}

TEST(LLMClient, RefusesDeepBodiesBeforeParsing) {
  LLMConfig openai;
  Completion c;
  std::string error;
  std::string deep(60000, '[');
  EXPECT_FALSE(parseResponseBody(openai, "{\"choices\": " + deep, c, error));
  EXPECT_NE(error.find("deeper than 64 levels"), std::string::npos) << error;
  // Brackets inside the model's text are a string, not nesting.
  ASSERT_TRUE(parseResponseBody(openai, "{\"choices\":[{\"message\":{\"content\":\"" + deep + "\"}}]}", c, error))
      << error;
  EXPECT_EQ(c.text.size(), deep.size());
}

TEST(LLMClient, WrongTypesInTheResponseAreNotFatal) {
  // With exceptions off, nlohmann's value() on a wrong type aborts the process; every field is type-checked.
  LLMConfig openai, anthropic;
  anthropic.api = "anthropic";
  Completion c;
  std::string error;
  ASSERT_TRUE(parseResponseBody(
      openai, R"({"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":"many","completion_tokens":[1]}})",
      c, error));
  EXPECT_EQ(c.promptTokens, 0);
  EXPECT_EQ(c.completionTokens, 0);
  ASSERT_TRUE(parseResponseBody(anthropic, R"({"content":[{"type":5,"text":"a"},{"type":"text","text":7},
                                              {"type":"text","text":"b"}],"usage":[]})",
                                c, error));
  EXPECT_EQ(c.text, "b");
}

TEST(LLMClient, TokenUsageSaturates) {
  LLMConfig openai;
  Completion c;
  std::string error;
  // 2^63 does not fit int64_t; -5, 1e300 and 2^62 are not believable either: each counts as the whole budget.
  for (const char *usage : {R"({"prompt_tokens":9223372036854775808,"completion_tokens":1})",
                            R"({"prompt_tokens":-5,"completion_tokens":1})",
                            R"({"prompt_tokens":1e300,"completion_tokens":1})",
                            R"({"prompt_tokens":4611686018427387904,"completion_tokens":4611686018427387904})"}) {
    ASSERT_TRUE(parseResponseBody(openai,
                                  std::string(R"({"choices":[{"message":{"content":"x"}}],"usage":)") + usage + "}",
                                  c, error));
    EXPECT_EQ(c.promptTokens, kAbsurdTokenCount) << usage;
  }
  EXPECT_EQ(addTokens(kAbsurdTokenCount, kAbsurdTokenCount), kAbsurdTokenCount);
  EXPECT_EQ(addTokens(INT64_MAX, INT64_MAX), kAbsurdTokenCount);
  EXPECT_EQ(addTokens(-1, 5), kAbsurdTokenCount);
  EXPECT_EQ(addTokens(3, 4), 7);
  EXPECT_EQ(saturateTokens(INT64_MIN), kAbsurdTokenCount);
}

TEST(LLMPolicy, RefusesDeepRepliesBeforeParsing) {
  std::vector<llvm::json::Value> schedules;
  std::vector<std::string> whys;
  std::string error;
  EXPECT_FALSE(extractSchedules(std::string(60000, '[') + std::string(60000, ']'), schedules, whys, error));
  EXPECT_EQ(error, "the reply's JSON nests deeper than 64 levels");
  EXPECT_FALSE(extractSchedules("```json\n{\"schedules\": " + std::string(70, '[') + "\n```", schedules, whys, error));
  EXPECT_EQ(error, "the reply's JSON nests deeper than 64 levels");
}

TEST(LLMClient, ResponseSchemaGoesInResponseFormat) {
  LLMConfig openai;
  openai.model = "m";
  std::vector<ChatMessage> messages = {{"user", "hi"}};
  EXPECT_FALSE(nlohmann::json::parse(buildRequestBody(openai, messages)).contains("response_format"));
  openai.responseSchema = R"({"type": "object"})";
  nlohmann::json a = nlohmann::json::parse(buildRequestBody(openai, messages));
  EXPECT_EQ(a["response_format"]["type"], "json_object");
  EXPECT_EQ(a["response_format"]["schema"]["type"], "object");
  LLMConfig anthropic = openai;
  anthropic.api = "anthropic"; // the messages API has no response_format
  EXPECT_FALSE(nlohmann::json::parse(buildRequestBody(anthropic, messages)).contains("response_format"));
}

/// The CPU gemm+bias+relu's facts (examples/cpu/gemm_bias_relu.mlir).
static PayloadFacts cpuGemmBiasRelu() {
  PayloadFacts f;
  f.entry = "gemm_bias_relu";
  f.rootOp = "linalg.generic";
  f.parallelSizes = {128, 256};
  f.rootLoops = 2;
  f.contractionOp = "linalg.matmul";
  f.contractionK = 256;
  f.contractionSizes = {128, 256};
  f.contractionOperandType = "f32";
  f.linalgOps = 3;
  f.reductionOps = 1;
  f.elementType = "f32";
  return f;
}

TEST(LLMPolicy, CompactActionsHoldOnlyTheTargetsActions) {
  std::string cpu = compactActions("cpu");
  EXPECT_NE(
      cpu.find(
          "in this order: split_k, split_rows, channels_last, tile(block), fuse(block), tile(thread), fuse(thread)"),
      std::string::npos)
      << cpu;
  EXPECT_NE(cpu.find("- vectorize: "), std::string::npos);
  EXPECT_EQ(cpu.find("- mma: "), std::string::npos); // GPU only
  EXPECT_LT(cpu.size(), compactActions("gpu").size());
}

TEST(LLMPolicy, ScheduleSchemaAdmitsValidSchedulesOnly) {
  nlohmann::json schema = nlohmann::json::parse(scheduleSchema(cpuGemmBiasRelu(), "cpu", 2));
  EXPECT_EQ(schema["properties"]["schedules"]["maxItems"], 2);
  const nlohmann::json &kinds = schema["properties"]["schedules"]["items"]["properties"]["actions"]["items"]["anyOf"];
  std::vector<std::string> names;
  for (const nlohmann::json &k : kinds)
    names.push_back(k["properties"]["kind"]["const"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "tile"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "lanes"), names.end()); // GPU only
  for (const nlohmann::json &k : kinds)
    if (k["properties"]["kind"]["const"] == "tile") {
      const nlohmann::json &params = k["properties"]["params"];
      EXPECT_EQ(params["additionalProperties"], false);
      EXPECT_EQ(params["properties"]["sizes"]["maxItems"], 2); // one size per parallel loop
      EXPECT_EQ(params["properties"]["level"]["enum"], nlohmann::json({"block", "thread", "reduction"}));
    }
}

TEST(LLMPolicy, ReadsSchedulesInTheOneLineForm) {
  llvm::json::Value actions = nullptr;
  std::string error;
  ASSERT_TRUE(scheduleFromText("tile(block, 64x64); fuse(block); tile(reduction, 8); unroll(2); reorder(1, 0); vectorize",
                               actions, error))
      << error;
  Schedule schedule;
  EXPECT_TRUE(parseSchedule(actions, schedule).empty());
  ASSERT_EQ(schedule.size(), 6u);
  EXPECT_EQ(schedule[0].sizes, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(schedule[3].value, 2);
  EXPECT_EQ(schedule[4].sizes, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(describe(schedule), "tile(block, 64x64); fuse(block); tile(reduction, 8); unroll(2); reorder(1,0); vectorize");
  EXPECT_FALSE(scheduleFromText("tile(block)", actions, error));
  EXPECT_NE(error.find("lacks its parameter sizes"), std::string::npos);
  EXPECT_FALSE(scheduleFromText("unroll(two)", actions, error));
  EXPECT_FALSE(scheduleFromText("tile(block, 64x64", actions, error));
  // An unknown kind is left for the registry to name.
  ASSERT_TRUE(scheduleFromText("retile(block)", actions, error));
  EXPECT_FALSE(parseSchedule(actions, schedule).empty());

  std::vector<llvm::json::Value> schedules;
  std::vector<std::string> whys;
  std::string reply = R"j({"schedules": [{"schedule": "tile(block, 32x32); fuse(block)", "why": "w"}]})j";
  ASSERT_TRUE(extractSchedules(reply, schedules, whys, error));
  EXPECT_EQ(schedules[0].getAsString().value_or(""), "tile(block, 32x32); fuse(block)");
  EXPECT_EQ(whys[0], "w");
}

TEST(LLMPolicy, OneLineScheduleSchemaNamesTheTargetsKinds) {
  nlohmann::json schema = nlohmann::json::parse(scheduleTextSchema("cpu", 2));
  std::string pattern = schema["properties"]["schedules"]["items"]["properties"]["schedule"]["pattern"];
  EXPECT_NE(pattern.find("|tile|"), std::string::npos) << pattern;
  EXPECT_EQ(pattern.find("lanes"), std::string::npos);
  EXPECT_EQ(schema["properties"]["schedules"]["maxItems"], 2);
}
