//===- LLMClient.cpp - chat completions over HTTP -------------------------===//

#include "LLMClient.h"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
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
}

bool LLMClient::budgetLeft(std::string &why) const {
  if (requests >= cfg.maxRequests) {
    why = "the request budget (" + std::to_string(cfg.maxRequests) + ") is spent";
    return false;
  }
  if (tokens >= cfg.maxTotalTokens) {
    why = "the token budget (" + std::to_string(cfg.maxTotalTokens) + ") is spent";
    return false;
  }
  return true;
}

double LLMClient::costDollars() const {
  return (promptTokens * cfg.promptPricePerMTok + completionTokens * cfg.completionPricePerMTok) / 1e6;
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
  return body.dump();
}

bool kforge::tune::parseResponseBody(const LLMConfig &config, const std::string &body, Completion &completion,
                                     std::string &error) {
  json response = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (response.is_discarded() || !response.is_object()) {
    error = "the response is not a JSON object (" + std::to_string(body.size()) + " bytes; truncated?)";
    return false;
  }
  std::string text;
  if (config.api == "anthropic") {
    if (!response.contains("content") || !response["content"].is_array()) {
      error = "the response has no content";
      return false;
    }
    for (const json &block : response["content"])
      if (block.is_object() && block.value("type", "") == "text" && block.contains("text") && block["text"].is_string())
        text += block["text"].get<std::string>();
    if (response.contains("usage") && response["usage"].is_object()) {
      completion.promptTokens = response["usage"].value("input_tokens", int64_t(0));
      completion.completionTokens = response["usage"].value("output_tokens", int64_t(0));
    }
  } else {
    const json *choices = response.contains("choices") ? &response["choices"] : nullptr;
    if (!choices || !choices->is_array() || choices->empty() || !(*choices)[0].is_object() ||
        !(*choices)[0].contains("message") || !(*choices)[0]["message"].is_object() ||
        !(*choices)[0]["message"].contains("content") || !(*choices)[0]["message"]["content"].is_string()) {
      error = "the response has no choices[0].message.content";
      return false;
    }
    text = (*choices)[0]["message"]["content"].get<std::string>();
    if (response.contains("usage") && response["usage"].is_object()) {
      completion.promptTokens = response["usage"].value("prompt_tokens", int64_t(0));
      completion.completionTokens = response["usage"].value("completion_tokens", int64_t(0));
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
  static CurlGlobal global;
  std::string why;
  if (!budgetLeft(why)) {
    error = why;
    return false;
  }
  const char *key = std::getenv(cfg.apiKeyEnv.c_str());
  std::string url = cfg.endpoint + (cfg.api == "anthropic" ? "/messages" : "/chat/completions");
  std::string body = buildRequestBody(cfg, messages);

  for (int attempt = 0;; ++attempt) {
    if (!budgetLeft(why)) {
      error = why + " (after: " + error + ")";
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
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, static_cast<long>(cfg.timeoutSeconds));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(std::min(cfg.timeoutSeconds, 30)));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
    CURLcode code = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    // Overwrite the header text holding the key as soon as it is no longer needed.
    std::fill(auth.begin(), auth.end(), '\0');

    bool transient = false;
    if (transfer.overflow) {
      error = "the response exceeds " + std::to_string(cfg.maxResponseBytes) + " bytes (cut off)";
    } else if (code != CURLE_OK) {
      error = std::string("request to ") + url + " failed: " + curl_easy_strerror(code);
      transient = code == CURLE_OPERATION_TIMEDOUT || code == CURLE_COULDNT_CONNECT || code == CURLE_RECV_ERROR ||
                  code == CURLE_SEND_ERROR || code == CURLE_GOT_NOTHING;
    } else if (status == 429 || status >= 500) {
      error = "HTTP " + std::to_string(status) + " from " + url;
      transient = true;
    } else if (status != 200) {
      error = "HTTP " + std::to_string(status) + " from " + url + ": " + transfer.body.substr(0, 300);
    } else if (parseResponseBody(cfg, transfer.body, completion, error)) {
      completion.attempts = attempt + 1;
      promptTokens += completion.promptTokens;
      completionTokens += completion.completionTokens;
      tokens += completion.promptTokens + completion.completionTokens;
      return true;
    }
    if (!transient || attempt >= cfg.maxRetries)
      return false;
    long delayMs = static_cast<long>(cfg.backoffMs) << attempt;
    if (transfer.retryAfterSeconds >= 0)
      delayMs = std::min<long>(transfer.retryAfterSeconds, 120) * 1000;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<long>(delayMs, 120000)));
  }
}
