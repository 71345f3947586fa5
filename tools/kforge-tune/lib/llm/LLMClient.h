//===- LLMClient.h - chat completions over HTTP (OpenAI and Anthropic APIs) -*- C++ -*-===//
//
// The LLM macro policy's only way out of the process: a prompt string in, a response string out. Speaks
// OpenAI-compatible chat completions (OpenAI, and local servers such as llama.cpp, vLLM, Ollama) and
// Anthropic messages over libcurl. The API key is read from an environment variable at request time and
// sent only in the request header: it is never stored, printed, logged, or written to a transcript.
// Transient failures (429, 5xx, timeouts, refused connections) are retried with exponential backoff,
// honouring Retry-After; a response larger than the cap is cut off and reported; a budget of requests and
// tokens stops the client cleanly.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_LLMCLIENT_H
#define KFORGE_TUNE_LLMCLIENT_H

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::tune {

struct LLMConfig {
  std::string api = "openai"; ///< "openai" (chat completions) or "anthropic" (messages).
  std::string endpoint;       ///< Base URL, e.g. https://api.openai.com/v1 (empty: the API's default).
  std::string model;
  double temperature = 0.2;
  int maxTokens = 2048;       ///< Per response.
  std::string apiKeyEnv;      ///< Variable holding the key (empty: OPENAI_API_KEY / ANTHROPIC_API_KEY).
  int timeoutSeconds = 120;   ///< Per attempt.
  int maxRetries = 3;         ///< Extra attempts after a transient failure.
  int backoffMs = 1000;       ///< First retry delay; doubled each time (Retry-After wins when given).
  size_t maxResponseBytes = 1 << 20;
  int maxRequests = 100;      ///< Budget: requests per run (attempts count).
  int64_t maxTotalTokens = 1000000; ///< Budget: prompt + completion tokens per run, from the usage fields.
  double promptPricePerMTok = 0, completionPricePerMTok = 0; ///< For the cost estimate (dollars).
};

struct ChatMessage {
  std::string role; ///< "system", "user" or "assistant".
  std::string content;
};

/// One finished exchange.
struct Completion {
  std::string text;
  int64_t promptTokens = 0, completionTokens = 0;
  int attempts = 0;
};

class LLMClient {
public:
  explicit LLMClient(LLMConfig config);
  virtual ~LLMClient() = default;

  /// Sends the conversation. On failure returns false and says why in `error` (without the key).
  virtual bool complete(const std::vector<ChatMessage> &messages, Completion &completion, std::string &error);

  /// False once the request or token budget is spent (`why` says which).
  bool budgetLeft(std::string &why) const;

  const LLMConfig &config() const { return cfg; }
  int requestsMade() const { return requests; }
  int64_t tokensUsed() const { return tokens; }
  double costDollars() const;

protected:
  LLMConfig cfg;
  int requests = 0;
  int64_t tokens = 0, promptTokens = 0, completionTokens = 0;
};

/// The request body for `config`'s API (exposed for tests).
std::string buildRequestBody(const LLMConfig &config, const std::vector<ChatMessage> &messages);
/// Extracts the text and token usage from a response body; false (with `error`) if it is not one.
bool parseResponseBody(const LLMConfig &config, const std::string &body, Completion &completion, std::string &error);

} // namespace kforge::tune

#endif // KFORGE_TUNE_LLMCLIENT_H
