//===- SeedCache.cpp - inputs and reference outputs kept across runs ------===//

#include "SeedCache.h"

#include <cctype>
#include <cstdio>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

using namespace kforge;

/// Keeps letters, digits, '-', '_', '.', 'x'; anything else becomes '_', so a key is one path component.
static std::string sanitize(const std::string &key) {
  std::string out;
  for (char c : key)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out.substr(0, 200);
}

/// The in-memory entries, by key, seed, kind and argument. One process verifies against one reference at a
/// time, so this holds a few seeds' inputs and outputs.
static std::map<std::string, std::vector<float>> &memory() {
  static std::map<std::string, std::vector<float>> entries;
  return entries;
}

SeedCache::SeedCache(std::string dir, std::string key, bool inMemory) {
  if (inMemory)
    memoryKey = sanitize(key);
  if (dir.empty())
    return;
  ::mkdir(dir.c_str(), 0755);
  root = dir + "/" + sanitize(key);
  ::mkdir(root.c_str(), 0755);
}

std::string SeedCache::file(int seed, const std::string &kind, size_t argument) const {
  return root + "/seed" + std::to_string(seed) + "." + kind + "." + std::to_string(argument) + ".f32";
}

static std::string entryName(const std::string &key, int seed, const std::string &kind, size_t argument) {
  return key + "/seed" + std::to_string(seed) + "." + kind + "." + std::to_string(argument);
}

bool SeedCache::load(int seed, const std::string &kind, const std::vector<size_t> &which,
                     const std::vector<size_t> &sizes, std::vector<std::vector<float>> &values) const {
  if (!enabled())
    return false;
  std::vector<std::vector<float>> loaded(values.size());
  bool fromMemory = !memoryKey.empty();
  for (size_t i : which) {
    auto hit = fromMemory ? memory().find(entryName(memoryKey, seed, kind, i)) : memory().end();
    if (hit == memory().end() || hit->second.size() != sizes[i]) {
      fromMemory = false;
      break;
    }
    loaded[i] = hit->second;
  }
  if (!fromMemory) {
    if (root.empty())
      return false;
    for (size_t i : which) {
      FILE *f = std::fopen(file(seed, kind, i).c_str(), "rb");
      if (!f)
        return false;
      loaded[i].resize(sizes[i]);
      size_t read = std::fread(loaded[i].data(), sizeof(float), sizes[i], f);
      bool atEnd = std::fgetc(f) == EOF;
      std::fclose(f);
      if (read != sizes[i] || !atEnd)
        return false;
    }
    if (!memoryKey.empty())
      for (size_t i : which)
        memory()[entryName(memoryKey, seed, kind, i)] = loaded[i];
  }
  for (size_t i : which)
    values[i] = std::move(loaded[i]);
  return true;
}

void SeedCache::store(int seed, const std::string &kind, const std::vector<size_t> &which,
                      const std::vector<std::vector<float>> &values) const {
  if (!memoryKey.empty())
    for (size_t i : which)
      memory()[entryName(memoryKey, seed, kind, i)] = values[i];
  if (root.empty())
    return;
  for (size_t i : which) {
    std::string path = file(seed, kind, i);
    std::string temporary = path + ".tmp" + std::to_string(::getpid());
    FILE *f = std::fopen(temporary.c_str(), "wb");
    if (!f)
      return;
    bool ok = std::fwrite(values[i].data(), sizeof(float), values[i].size(), f) == values[i].size();
    ok = std::fclose(f) == 0 && ok;
    if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0)
      std::remove(temporary.c_str());
  }
}
