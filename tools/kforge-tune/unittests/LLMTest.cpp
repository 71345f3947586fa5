//===- LLMTest.cpp - request bodies, response parsing, schedule extraction --===//

#include "llm/LLMClient.h"
#include "llm/LLMPolicy.h"

#include <gtest/gtest.h>
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
