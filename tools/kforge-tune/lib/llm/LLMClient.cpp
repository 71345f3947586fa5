//===- LLMClient.cpp - chat completions over HTTP -------------------------===//

#include "LLMClient.h"

#include "Files.h"
#include "JsonLimits.h"
#include "Report.h"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace kforge::tune;
using json = nlohmann::json;

LLMClient::LLMClient(LLMConfig config) : cfg(std::move(config)) {
  if (cfg.endpoint.empty())
    cfg.endpoint = cfg.api == "anthropic" ? "https://api.anthropic.com/v1" : "https://api.openai.com/v1";
  if (cfg.apiKeyEnv.empty())
    cfg.apiKeyEnv = cfg.api == "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  while (!cfg.endpoint.empty() && cfg.endpoint.back() == '/')
    cfg.endpoint.pop_back();
  // Children (compilers, runners, scripts they run) never need the key.
  hideFromChildren(cfg.apiKeyEnv);
}

int64_t kforge::tune::saturateTokens(int64_t count) {
  return count < 0 || count > kAbsurdTokenCount ? kAbsurdTokenCount : count;
}

int64_t kforge::tune::addTokens(int64_t a, int64_t b) {
  a = saturateTokens(a), b = saturateTokens(b);
  return a >= kAbsurdTokenCount - b ? kAbsurdTokenCount : a + b;
}

/// Is `c` one of `set`'s characters (never the terminator)?
static bool isOneOf(char c, const char *set) { return c != '\0' && std::strchr(set, c); }

/// Case-insensitive: does `text` hold `word` at `at`?
static bool hasWordAt(const std::string &text, size_t at, const char *word) {
  size_t n = std::char_traits<char>::length(word);
  if (at + n > text.size())
    return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != word[i])
      return false;
  return true;
}

/// Where the secret value of a header named at `at` begins ("Authorization: Bearer |sk-...",
/// "\"x-api-key\": \"|sk-..."), or std::string::npos when no such header is named there.
static size_t secretValueAt(const std::string &text, size_t at) {
  static const char *const names[] = {"proxy-authorization", "authorization", "x-api-key", "api-key", "api_key",
                                      "bearer"};
  if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '-' || text[at - 1] == '_'))
    return std::string::npos; // inside a longer word
  for (const char *name : names) {
    if (!hasWordAt(text, at, name))
      continue;
    size_t i = at + std::char_traits<char>::length(name);
    auto skip = [&](const char *chars) {
      while (i < text.size() && isOneOf(text[i], chars))
        ++i;
    };
    if (std::string(name) == "bearer") {
      size_t before = i;
      skip(" \t");
      return i > before ? i : std::string::npos;
    }
    skip("\"'\\ \t"); // a closing quote of a JSON key, escaped or not
    if (i >= text.size() || (text[i] != ':' && text[i] != '='))
      continue;
    ++i;
    skip("\"'\\ \t");
    for (const char *scheme : {"bearer", "basic", "token"})
      if (hasWordAt(text, i, scheme) && i + std::strlen(scheme) < text.size() &&
          (text[i + std::strlen(scheme)] == ' ' || text[i + std::strlen(scheme)] == '\t')) {
        i += std::strlen(scheme);
        skip(" \t");
        break;
      }
    return i;
  }
  return std::string::npos;
}

std::string kforge::tune::redactSecrets(const std::string &text, const std::string &key) {
  static const char redacted[] = "[redacted]";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (!key.empty() && text.compare(i, key.size(), key) == 0) {
      out += redacted;
      i += key.size();
      continue;
    }
    size_t value = secretValueAt(text, i);
    if (value == std::string::npos) {
      out += text[i++];
      continue;
    }
    out.append(text, i, value - i);
    if (text.compare(value, sizeof(redacted) - 1, redacted) == 0) { // already scrubbed: stays as it is
      i = value;
      continue;
    }
    size_t end = value;
    while (end < text.size() && text[end] != '\0' && !isOneOf(text[end], "\"'\\ \t\r\n,;}]&"))
      ++end;
    if (end > value)
      out += redacted;
    i = end;
  }
  return out;
}

bool LLMClient::budgetLeft(std::string &why) const {
  if (requests >= cfg.maxRequests) {
    why = "the request budget (" + std::to_string(cfg.maxRequests) + ") is spent";
    return false;
  }
  if (tokens >= kAbsurdTokenCount) {
    why = "the endpoint reported an absurd token usage, so the token budget counts as spent";
    return false;
  }
  if (tokens >= cfg.maxTotalTokens) {
    why = "the token budget (" + std::to_string(cfg.maxTotalTokens) + ") is spent";
    return false;
  }
  return true;
}

double LLMClient::costDollars() const {
  return (static_cast<double>(promptTokens) * cfg.promptPricePerMTok +
          static_cast<double>(completionTokens) * cfg.completionPricePerMTok) /
         1e6;
}

std::string kforge::tune::buildRequestBody(const LLMConfig &config, const std::vector<ChatMessage> &messages) {
  json body = {{"model", config.model}, {"max_tokens", config.maxTokens}, {"temperature", config.temperature}};
  json list = json::array();
  std::string system;
  for (const ChatMessage &m : messages) {
    if (config.api == "anthropic" && m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content; // Anthropic takes the system prompt apart
      continue;
    }
    list.push_back({{"role", m.role}, {"content", m.content}});
  }
  body["messages"] = list;
  if (!system.empty())
    body["system"] = system;
  if (config.api != "anthropic" && !config.responseSchema.empty()) {
    // The schema is kforge's own text; one that does not parse is a bug, and the request goes without it.
    json schema = json::parse(config.responseSchema, nullptr, /*allow_exceptions=*/false);
    if (!schema.is_discarded())
      body["response_format"] = {{"type", "json_object"}, {"schema", schema}};
  }
  return body.dump();
}

/// A usage field as a token count: missing, null or not a number counts 0; negative, fractional beyond range,
/// or absurdly large counts kAbsurdTokenCount (the budget is then spent).
static int64_t tokenCount(const json &usage, const char *name) {
  auto it = usage.find(name);
  if (it == usage.end() || !it->is_number())
    return 0;
  if (it->is_number_unsigned())
    return it->get<uint64_t>() >= static_cast<uint64_t>(kAbsurdTokenCount) ? kAbsurdTokenCount
                                                                           : static_cast<int64_t>(it->get<uint64_t>());
  if (it->is_number_integer())
    return saturateTokens(it->get<int64_t>());
  double count = it->get<double>();
  if (!(count >= 0) || count >= static_cast<double>(kAbsurdTokenCount)) // NaN, negative, huge, infinite
    return kAbsurdTokenCount;
  return static_cast<int64_t>(count);
}

/// The string member `name` of `object`, or "" (never the non-throwing library's abort on a wrong type).
static std::string stringMember(const json &object, const char *name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool kforge::tune::parseResponseBody(const LLMConfig &config, const std::string &body, Completion &completion,
                                     std::string &error) {
  if (!jsonDepthWithin(body, config.maxJsonDepth)) {
    error = "the response nests JSON deeper than " + std::to_string(config.maxJsonDepth) + " levels (refused unparsed)";
    return false;
  }
  json response = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (response.is_discarded() || !response.is_object()) {
    error = "the response is not a JSON object (" + std::to_string(body.size()) + " bytes; truncated?)";
    return false;
  }
  std::string text;
  auto usage = response.find("usage");
  bool hasUsage = usage != response.end() && usage->is_object();
  if (config.api == "anthropic") {
    auto content = response.find("content");
    if (content == response.end() || !content->is_array()) {
      error = "the response has no content";
      return false;
    }
    for (const json &block : *content)
      if (block.is_object() && stringMember(block, "type") == "text")
        text += stringMember(block, "text");
    if (hasUsage) {
      completion.promptTokens = tokenCount(*usage, "input_tokens");
      completion.completionTokens = tokenCount(*usage, "output_tokens");
    }
  } else {
    auto choices = response.find("choices");
    const json *content = nullptr;
    if (choices != response.end() && choices->is_array() && !choices->empty() && (*choices)[0].is_object()) {
      const json &choice = (*choices)[0];
      auto message = choice.find("message");
      if (message != choice.end() && message->is_object()) {
        auto c = message->find("content");
        if (c != message->end() && c->is_string())
          content = &*c;
      }
    }
    if (!content) {
      error = "the response has no choices[0].message.content";
      return false;
    }
    text = content->get<std::string>();
    if (hasUsage) {
      completion.promptTokens = tokenCount(*usage, "prompt_tokens");
      completion.completionTokens = tokenCount(*usage, "completion_tokens");
    }
  }
  completion.text = text;
  return true;
}

namespace {
/// What libcurl hands back for one attempt.
struct Transfer {
  std::string body;
  size_t cap = 0;
  bool overflow = false;
  size_t headerBytes = 0; ///< Any byte of a response (headers included) means the endpoint is alive.
  long retryAfterSeconds = -1;
};

size_t onBody(char *data, size_t size, size_t count, void *user) {
  auto *t = static_cast<Transfer *>(user);
  size_t n = size * count;
  if (t->body.size() + n > t->cap) {
    t->overflow = true;
    return 0; // makes libcurl stop with CURLE_WRITE_ERROR
  }
  t->body.append(data, n);
  return n;
}

size_t onHeader(char *data, size_t size, size_t count, void *user) {
  auto *t = static_cast<Transfer *>(user);
  std::string line(data, size * count);
  t->headerBytes += line.size();
  std::string lower = line;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.rfind("retry-after:", 0) == 0)
    t->retryAfterSeconds = std::strtol(line.c_str() + 12, nullptr, 10);
  return size * count;
}

/// libcurl's global state, set up once.
struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};
} // namespace

bool LLMClient::complete(const std::vector<ChatMessage> &messages, Completion &completion, std::string &error) {
  const char *key = std::getenv(cfg.apiKeyEnv.c_str());
  // Nothing the endpoint sends back reaches a log, the terminal or a transcript with the key in it, or with
  // control characters (an error body is the endpoint's text, not ours).
  auto scrub = [&](const std::string &text) { return redactSecrets(text, key ? key : ""); };
  bool ok = send(messages, completion, error, key);
  if (ok)
    completion.text = scrub(completion.text);
  else
    error = printableText(scrub(error), 2000);
  return ok;
}

bool LLMClient::send(const std::vector<ChatMessage> &messages, Completion &completion, std::string &error,
                        const char *key) {
  static CurlGlobal global;
  std::string why;
  if (!budgetLeft(why)) {
    error = why;
    return false;
  }
  std::string url = cfg.endpoint + (cfg.api == "anthropic" ? "/messages" : "/chat/completions");
  std::string body = buildRequestBody(cfg, messages);
  // One attempt never runs past the timeout, and the attempts together never past the deadline (an endpoint
  // that accepts and never answers costs two timeouts, not one per retry). The waits between attempts are not
  // counted: they are bounded by themselves (backoff and Retry-After, at most 120 s each).
  using Clock = std::chrono::steady_clock;
  const long timeoutMs = std::max(1, cfg.timeoutSeconds) * 1000L;
  const long deadlineMs = cfg.deadlineSeconds > 0 ? cfg.deadlineSeconds * 1000L : 2 * timeoutMs;
  long spentMs = 0;
  auto leftMs = [&] { return deadlineMs - spentMs; };

  for (int attempt = 0;; ++attempt) {
    if (!budgetLeft(why)) {
      error = why + " (after: " + error + ")";
      return false;
    }
    long attemptMs = std::min(timeoutMs, leftMs());
    if (attemptMs <= 0) {
      error += " (the request's attempts have had their " + std::to_string(deadlineMs / 1000) + " s)";
      return false;
    }
    ++requests;
    CURL *curl = curl_easy_init();
    if (!curl) {
      error = "libcurl cannot start a transfer";
      return false;
    }
    Transfer transfer;
    transfer.cap = cfg.maxResponseBytes;
    curl_slist *headers = curl_slist_append(nullptr, "Content-Type: application/json");
    std::string auth;
    if (key && *key) {
      auth = cfg.api == "anthropic" ? std::string("x-api-key: ") + key : std::string("Authorization: Bearer ") + key;
      headers = curl_slist_append(headers, auth.c_str());
    }
    if (cfg.api == "anthropic")
      headers = curl_slist_append(headers, "anthropic-version: 2023-06-01");
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    // TIMEOUT_MS bounds the whole transfer, a response dripped a byte at a time included.
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, attemptMs);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, std::min(attemptMs, 30000L));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    // The key goes to the endpoint named, never to wherever a redirect points.
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
    Clock::time_point start = Clock::now();
    CURLcode code = curl_easy_perform(curl);
    // An attempt that timed out had its whole allowance, even when curl's timer fired a millisecond before this
    // clock says it should: counted as less, it left a few milliseconds for a third attempt (llm-hostile.test's
    // black hole saw 3 requests instead of 2 on a loaded machine).
    long tookMs = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    spentMs += code == CURLE_OPERATION_TIMEDOUT ? std::max(tookMs, attemptMs) : tookMs;
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    // Overwrite the header text holding the key as soon as it is no longer needed.
    std::fill(auth.begin(), auth.end(), '\0');

    bool transient = false;
    if (transfer.overflow) {
      error = "the response exceeds " + std::to_string(cfg.maxResponseBytes) + " bytes (cut off)";
    } else if (code == CURLE_OPERATION_TIMEDOUT && transfer.headerBytes + transfer.body.size() > 0) {
      // The endpoint answers, but too slowly to finish (a stalled or dripping stream): another attempt would cost
      // the whole timeout again.
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.1f", attemptMs / 1000.0);
      error = "the response from " + url + " did not finish within " + seconds + " s (" +
              std::to_string(transfer.headerBytes + transfer.body.size()) +
              " bytes came: a stalled or slow-drip endpoint; not retried)";
    } else if (code != CURLE_OK) {
      error = std::string("request to ") + url + " failed: " + curl_easy_strerror(code);
      transient = code == CURLE_OPERATION_TIMEDOUT || code == CURLE_COULDNT_CONNECT || code == CURLE_RECV_ERROR ||
                  code == CURLE_SEND_ERROR || code == CURLE_GOT_NOTHING;
    } else if (status == 429 || status >= 500) {
      error = "HTTP " + std::to_string(status) + " from " + url;
      transient = true;
    } else if (status != 200) {
      // The body may echo the request, key included: scrubbed before it is cut, so no part of the key survives.
      error = "HTTP " + std::to_string(status) + " from " + url + ": " +
              printableText(redactSecrets(transfer.body, key ? key : ""), 300);
    } else if (parseResponseBody(cfg, transfer.body, completion, error)) {
      completion.attempts = attempt + 1;
      promptTokens = addTokens(promptTokens, completion.promptTokens);
      completionTokens = addTokens(completionTokens, completion.completionTokens);
      tokens = addTokens(tokens, addTokens(completion.promptTokens, completion.completionTokens));
      return true;
    }
    if (!transient || attempt >= cfg.maxRetries)
      return false;
    long delayMs = std::min(static_cast<long>(std::max(0, cfg.backoffMs)) << std::min(attempt, 16), 120000L);
    if (transfer.retryAfterSeconds >= 0)
      delayMs = std::min<long>(transfer.retryAfterSeconds, 120) * 1000;
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
  }
}
