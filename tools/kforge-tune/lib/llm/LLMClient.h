//===- LLMClient.h - chat completions over HTTP (OpenAI and Anthropic APIs) -*- C++ -*-===//
//
// The LLM macro policy's only way out of the process: a prompt string in, a response string out. Speaks
// OpenAI-compatible chat completions (OpenAI, and local servers such as llama.cpp, vLLM, Ollama) and
// Anthropic messages over libcurl. The API key is read from an environment variable at request time and
// sent only in the request header: it is never stored, printed, logged, or written to a transcript, every
// error text is scrubbed of it (an endpoint may echo the request's headers), and the variable is kept from
// every child process (hideFromChildren). Transient failures (429, 5xx, timeouts before any byte came,
// refused connections) are retried with exponential backoff, honouring Retry-After, until the attempts
// have spent the request's deadline; a response larger than the cap is cut off and reported; a body nested deeper than the
// limit is refused before it is parsed; reported token usage is saturated; a budget of requests and tokens
// stops the client cleanly.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_LLMCLIENT_H
#define KFORGE_TUNE_LLMCLIENT_H

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::tune {

/// Deepest JSON nesting accepted from the endpoint or the model (parsers recurse per level; nothing a model
/// should send nests beyond a handful).
constexpr unsigned kMaxReplyJsonDepth = 64;

struct LLMConfig {
  std::string api = "openai"; ///< "openai" (chat completions) or "anthropic" (messages).
  std::string endpoint;       ///< Base URL, e.g. https://api.openai.com/v1 (empty: the API's default).
  std::string model;
  double temperature = 0.2;
  int maxTokens = 2048;       ///< Per response.
  std::string apiKeyEnv;      ///< Variable holding the key (empty: OPENAI_API_KEY / ANTHROPIC_API_KEY).
  int timeoutSeconds = 120;   ///< Per attempt, the whole transfer (connect, send, wait, receive); at least 1.
  /// All attempts of one request together, the waits between them not counted (0: twice timeoutSeconds).
  int deadlineSeconds = 0;
  int maxRetries = 3;         ///< Extra attempts after a transient failure.
  int backoffMs = 1000;       ///< First retry delay; doubled each time (Retry-After wins when given).
  size_t maxResponseBytes = 1 << 20;
  unsigned maxJsonDepth = kMaxReplyJsonDepth; ///< In a response body (checked before parsing).
  int maxRequests = 100;      ///< Budget: requests per run (attempts count).
  int64_t maxTotalTokens = 1000000; ///< Budget: prompt + completion tokens per run, from the usage fields.
  double promptPricePerMTok = 0, completionPricePerMTok = 0; ///< For the cost estimate (dollars).
  /// A JSON schema the reply must follow, sent (OpenAI API only) as response_format {"type": "json_object",
  /// "schema": ...}: llama.cpp's server and llama-cpp-python turn it into a grammar that constrains decoding.
  /// Empty: no response_format.
  std::string responseSchema;
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
  /// The schema the next requests' replies must follow (LLMConfig::responseSchema); the policy sets it per
  /// request because it bounds the number of schedules asked for.
  void setResponseSchema(std::string schema) { cfg.responseSchema = std::move(schema); }
  /// The sampling temperature of the next requests.
  void setTemperature(double temperature) { cfg.temperature = temperature; }
  int requestsMade() const { return requests; }
  int64_t tokensUsed() const { return tokens; }
  double costDollars() const;

protected:
  /// complete's attempts, with the key (or null) already read; `error` is scrubbed by the caller.
  bool send(const std::vector<ChatMessage> &messages, Completion &completion, std::string &error, const char *key);

  LLMConfig cfg;
  int requests = 0;
  int64_t tokens = 0, promptTokens = 0, completionTokens = 0;
};

/// Token counts at or above this are not believed: an endpoint that reports them (or a negative or non-numeric
/// count) is taken to have spent the token budget.
constexpr int64_t kAbsurdTokenCount = int64_t(1) << 40;
/// `count` clamped to [0, kAbsurdTokenCount]; a negative count counts as absurd.
int64_t saturateTokens(int64_t count);
/// a + b for token counts, saturating at kAbsurdTokenCount.
int64_t addTokens(int64_t a, int64_t b);

/// `text` without the secret `key` (every occurrence) and without the value of any Authorization, x-api-key or
/// api-key header it quotes (as a header line or as echoed JSON), each replaced by "[redacted]".
std::string redactSecrets(const std::string &text, const std::string &key);

/// The request body for `config`'s API (exposed for tests).
std::string buildRequestBody(const LLMConfig &config, const std::vector<ChatMessage> &messages);
/// Extracts the text and token usage from a response body; false (with `error`) if it is not one.
bool parseResponseBody(const LLMConfig &config, const std::string &body, Completion &completion, std::string &error);

} // namespace kforge::tune

#endif // KFORGE_TUNE_LLMCLIENT_H
