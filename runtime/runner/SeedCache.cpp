//===- SeedCache.cpp - inputs and reference outputs kept across runs ------===//

#include "SeedCache.h"

#include "Parallel.h"

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <random>
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
static std::map<std::string, Floats> &memory() {
  static std::map<std::string, Floats> entries;
  return entries;
}

/// Summaries of memory()'s reference outputs (SeedCache::keepSummary), by the same names; an entry's summary
/// goes when the entry is replaced or dropped.
static std::map<std::string, ReferenceSummary> &summaries() {
  static std::map<std::string, ReferenceSummary> kept;
  return kept;
}

/// Bytes held by memory()'s entries, and the most they may hold: a quarter of this machine's memory (the
/// judge's own copies and each executor's shared memory and buffers hold the same arguments again).
static size_t memoryHeld = 0;
static size_t memoryBound() {
  static const size_t bound = [] {
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(pageSize) / 4 : size_t(0);
  }();
  return bound;
}

/// The entry `name`, emptied, with room accounted for `count` floats; nullptr (and the entry dropped) when
/// that would take memory() past its bound.
static Floats *makeRoom(const std::string &name, size_t count) {
  auto [entry, added] = memory().try_emplace(name);
  size_t before = entry->second.size() * sizeof(float), after = count * sizeof(float);
  memoryHeld -= before;
  summaries().erase(name);
  if (memoryHeld + after > memoryBound()) {
    memory().erase(entry);
    return nullptr;
  }
  memoryHeld += after;
  Floats().swap(entry->second);
  return &entry->second;
}

//===----------------------------------------------------------------------===//
// Signatures: the files are trusted only if this user's key vouches for them
//===----------------------------------------------------------------------===//

namespace {
/// SHA-256 and HMAC from the system's OpenSSL (libcrypto.so.3), loaded when a cache directory is used, the way
/// the CUDA driver is: kforge-run keeps no link-time dependency beyond libstdc++ (it runs on the GPU machine
/// without kforge's toolchain), and a hash written here would be the defect STYLE.md names. Without libcrypto
/// the files are neither read nor written (the in-memory cache of --serve still works).
class Crypto {
public:
  static const Crypto &get() {
    static Crypto crypto;
    return crypto;
  }
  bool available() const { return sha256 && hmac && sha256Md; }
  std::array<unsigned char, 32> digest(const void *data, size_t bytes) const {
    std::array<unsigned char, 32> out{};
    sha256(static_cast<const unsigned char *>(data), bytes, out.data());
    return out;
  }
  std::array<unsigned char, 32> mac(const std::string &key, const std::string &message) const {
    std::array<unsigned char, 32> out{};
    unsigned int length = 0;
    hmac(sha256Md(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char *>(message.data()),
         message.size(), out.data(), &length);
    return out;
  }

private:
  Crypto() {
    void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!library)
      return;
    sha256 = reinterpret_cast<Sha256Fn>(dlsym(library, "SHA256"));
    hmac = reinterpret_cast<HmacFn>(dlsym(library, "HMAC"));
    sha256Md = reinterpret_cast<MdFn>(dlsym(library, "EVP_sha256"));
  }
  using Sha256Fn = unsigned char *(*)(const unsigned char *, size_t, unsigned char *);
  using MdFn = const void *(*)();
  using HmacFn = unsigned char *(*)(const void *, const void *, int, const unsigned char *, size_t, unsigned char *,
                                    unsigned int *);
  Sha256Fn sha256 = nullptr;
  HmacFn hmac = nullptr;
  MdFn sha256Md = nullptr;
};
} // namespace

std::string kforge::cacheKeyPath() {
  if (const char *path = std::getenv("KFORGE_CACHE_KEY_FILE"); path && *path)
    return path;
  const char *home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.cache/kforge/cache.key" : "";
}

/// This user's cache key (64 hex characters), shared with kforge-compile's artifact cache: read from
/// cacheKeyPath(), or made there (mode 0600, through a new file linked into place) on first use.
static std::string cacheSecret() {
  std::string path = cacheKeyPath();
  if (path.empty())
    return "";
  auto read = [&]() -> std::string {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
      return "";
    struct stat info;
    char buffer[65];
    ssize_t n = fstat(fd, &info) == 0 && S_ISREG(info.st_mode) ? ::read(fd, buffer, sizeof(buffer)) : -1;
    close(fd);
    return n == 64 ? std::string(buffer, 64) : "";
  };
  if (std::string secret = read(); !secret.empty())
    return secret;
  // mkdir -p of the key's directory (private, like kforge-compile's).
  for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
    mkdir(path.substr(0, slash).c_str(), 0700);
  std::random_device random;
  std::string secret;
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    unsigned byte = random() & 0xff;
    secret += kHex[byte >> 4];
    secret += kHex[byte & 15];
  }
  std::string temporary = path + ".XXXXXX";
  std::vector<char> name(temporary.begin(), temporary.end());
  name.push_back('\0');
  int fd = mkostemp(name.data(), O_CLOEXEC); // mode 0600
  if (fd < 0)
    return "";
  bool written = ::write(fd, secret.data(), secret.size()) == static_cast<ssize_t>(secret.size());
  written = close(fd) == 0 && written;
  // link() never replaces: of two runs that race to make the key, the first wins and both read what it left.
  if (written)
    link(name.data(), path.c_str());
  unlink(name.data());
  return read();
}

//===----------------------------------------------------------------------===//
// The cache
//===----------------------------------------------------------------------===//

SeedCache::SeedCache(std::string dir, std::string key, bool inMemory, size_t seedBytes) {
  if (inMemory)
    memoryKey = sanitize(key);
  if (dir.empty())
    return;
  if (seedBytes > kMaxSeedFileBytes) {
    char text[200];
    std::snprintf(text, sizeof(text),
                  "the seed cache's files are not used: a seed takes %.2f GB (over %.2f GB), and reading one back "
                  "costs more than computing it again",
                  seedBytes / 1e9, kMaxSeedFileBytes / 1e9);
    note = text;
    return;
  }
  if (!Crypto::get().available()) {
    note = "the seed cache's files are not used: libcrypto.so.3 (OpenSSL), which signs and checks them, is "
           "missing";
    return;
  }
  secret = cacheSecret();
  if (secret.empty()) {
    note = "the seed cache's files are not used: no cache key (" + cacheKeyPath() + ") could be read or made";
    return;
  }
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

std::array<unsigned char, 32> SeedCache::signature(int seed, const std::string &kind, size_t argument,
                                                   const Floats &values) const {
  // HMAC over what the file stands for (the directory's key: reference build, shapes, types; seed, kind,
  // argument; the length) and the SHA-256 of its values: a file moved to another name, another reference's
  // directory or another user's cache does not verify.
  const Crypto &crypto = Crypto::get();
  std::array<unsigned char, 32> digest = crypto.digest(values.data(), values.size() * sizeof(float));
  std::string message = "kforge-seed-cache/1";
  message += '\0' + root.substr(root.rfind('/') + 1) + '\0' + entryName("", seed, kind, argument) + '\0' +
             std::to_string(values.size()) + '\0';
  message.append(reinterpret_cast<const char *>(digest.data()), digest.size());
  return crypto.mac(secret, message);
}

bool SeedCache::view(int seed, const std::string &kind, const std::vector<size_t> &which,
                     const std::vector<size_t> &sizes, std::vector<const float *> &data) const {
  if (memoryKey.empty())
    return false;
  std::vector<const float *> held;
  for (size_t i : which) {
    auto hit = memory().find(entryName(memoryKey, seed, kind, i));
    if (hit == memory().end() || hit->second.size() != sizes[i])
      return false;
    held.push_back(hit->second.data());
  }
  for (size_t k = 0; k < which.size(); ++k)
    data[which[k]] = held[k];
  return true;
}

bool SeedCache::load(int seed, const std::string &kind, const std::vector<size_t> &which,
                     const std::vector<size_t> &sizes, std::vector<Floats> &values) const {
  if (!enabled())
    return false;
  std::vector<const float *> held(values.size());
  if (view(seed, kind, which, sizes, held)) { // into the caller's vectors, kept from seed to seed
    for (size_t i : which) {
      values[i].resize(sizes[i]);
      copyFloats(values[i].data(), held[i], sizes[i]);
    }
    return true;
  }
  if (root.empty())
    return false;
  std::vector<Floats> loaded(values.size());
  for (size_t i : which) {
    // The values, then their 32-byte signature; a file that is not a regular one, of another size, or whose
    // signature this user's key did not make is a miss (recomputed and replaced).
    int fd = open(file(seed, kind, i).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
      return false;
    struct stat info;
    std::array<unsigned char, 32> stored{};
    size_t bytes = sizes[i] * sizeof(float);
    bool ok =
        fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) == bytes + stored.size();
    if (ok) {
      loaded[i].resize(sizes[i]);
      ok = pread(fd, loaded[i].data(), bytes, 0) == static_cast<ssize_t>(bytes) &&
           pread(fd, stored.data(), stored.size(), static_cast<off_t>(bytes)) == static_cast<ssize_t>(stored.size());
    }
    close(fd);
    if (!ok)
      return false;
    std::array<unsigned char, 32> expected = signature(seed, kind, i, loaded[i]);
    unsigned char difference = 0;
    for (size_t b = 0; b < expected.size(); ++b)
      difference |= expected[b] ^ stored[b];
    if (difference != 0)
      return false;
  }
  if (!memoryKey.empty())
    for (size_t i : which)
      if (Floats *slot = makeRoom(entryName(memoryKey, seed, kind, i), loaded[i].size()))
        *slot = loaded[i];
  for (size_t i : which)
    values[i] = std::move(loaded[i]);
  return true;
}

void SeedCache::store(int seed, const std::string &kind, const std::vector<size_t> &which,
                      const std::vector<Floats> &values) const {
  if (!memoryKey.empty())
    for (size_t i : which)
      if (Floats *slot = makeRoom(entryName(memoryKey, seed, kind, i), values[i].size()))
        *slot = values[i];
  writeFiles(seed, kind, which, values);
}

bool SeedCache::adopt(int seed, const std::string &kind, const std::vector<size_t> &which,
                      std::vector<Floats> &values) const {
  // All or nothing: the caller reads either every argument from memory or every one from `values`.
  if (memoryKey.empty()) {
    writeFiles(seed, kind, which, values);
    return false;
  }
  size_t bytes = 0, replaced = 0;
  for (size_t i : which) {
    bytes += values[i].size() * sizeof(float);
    if (auto it = memory().find(entryName(memoryKey, seed, kind, i)); it != memory().end())
      replaced += it->second.size() * sizeof(float);
  }
  if (memoryHeld - replaced + bytes > memoryBound()) {
    store(seed, kind, which, values);
    return false;
  }
  writeFiles(seed, kind, which, values);
  for (size_t i : which)
    *makeRoom(entryName(memoryKey, seed, kind, i), values[i].size()) = std::move(values[i]);
  return true;
}

void SeedCache::writeFiles(int seed, const std::string &kind, const std::vector<size_t> &which,
                           const std::vector<Floats> &values) const {
  if (root.empty())
    return;
  for (size_t i : which) {
    std::string path = file(seed, kind, i);
    std::string temporary = path + ".tmp" + std::to_string(::getpid());
    std::array<unsigned char, 32> mac = signature(seed, kind, i, values[i]);
    FILE *f = std::fopen(temporary.c_str(), "wbx");
    if (!f)
      return;
    bool ok = std::fwrite(values[i].data(), sizeof(float), values[i].size(), f) == values[i].size() &&
              std::fwrite(mac.data(), 1, mac.size(), f) == mac.size();
    ok = std::fclose(f) == 0 && ok;
    if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0)
      std::remove(temporary.c_str());
  }
}

std::optional<ReferenceSummary> SeedCache::summary(int seed, size_t argument, size_t size) const {
  if (memoryKey.empty())
    return std::nullopt;
  std::string name = entryName(memoryKey, seed, "outputs", argument);
  auto entry = memory().find(name);
  auto kept = summaries().find(name);
  if (entry == memory().end() || entry->second.size() != size || kept == summaries().end())
    return std::nullopt;
  return kept->second;
}

void SeedCache::keepSummary(int seed, size_t argument, size_t size, const ReferenceSummary &summary) const {
  if (memoryKey.empty())
    return;
  std::string name = entryName(memoryKey, seed, "outputs", argument);
  auto entry = memory().find(name);
  if (entry != memory().end() && entry->second.size() == size)
    summaries()[name] = summary;
}
