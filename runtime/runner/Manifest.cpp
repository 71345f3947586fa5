//===- Manifest.cpp - an artifact's manifest ------------------------------===//

#include "Manifest.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <climits>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kforge;

int64_t ManifestArgument::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size; // readManifest bounds the product (kMaxElements)
  return count;
}

/// The most elements all of an artifact's arguments may have together: kforge-run holds each as floats in the
/// judge and the executors (2^34 floats are 64 GiB). More is a clear error, never an abort in an allocation.
static constexpr size_t kMaxManifestBytes = size_t(1) << 20;

static constexpr int64_t kMaxElements = int64_t(1) << 34;

/// A file name without a directory part: the library must lie beside its manifest.
static bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

/// A C identifier: the entry point's symbol.
static bool isIdentifier(const std::string &name) {
  if (name.empty() || name.size() > 256 || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

int kforge::openRegularFile(const std::string &path, const std::string &what, bool noFollow, size_t maxBytes,
                            std::string &why) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; nothing but a regular file is
  // read, so the flag never matters after the check.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (noFollow ? O_NOFOLLOW : 0));
  if (fd < 0) {
    why = errno == ELOOP ? what + " '" + path + "' is a symbolic link"
                         : "cannot read " + what + " '" + path + "'";
    return -1;
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    why = what + " '" + path + "' is not a regular file";
    return -1;
  }
  if (static_cast<uint64_t>(info.st_size) > maxBytes) {
    ::close(fd);
    why = what + " '" + path + "' is larger than " + std::to_string(maxBytes >> 20) + " MB";
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

/// Reads at most `maxBytes` + 1 bytes of `fd` into `text` (then closes it): one more than allowed says the file
/// grew past the bound after the check.
static bool readBounded(int fd, size_t maxBytes, std::string &text) {
  text.assign(maxBytes + 1, '\0');
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      ::close(fd);
      return false;
    }
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  return done <= maxBytes;
}

std::optional<int64_t> kforge::parseDomain(const std::string &domain) {
  if (domain.empty() || domain == "positive")
    return 0;
  const std::string prefix = "index:";
  if (domain.compare(0, prefix.size(), prefix) != 0 || domain.size() == prefix.size() ||
      domain.size() > prefix.size() + 8)
    return std::nullopt;
  int64_t bound = 0;
  for (char c : domain.substr(prefix.size())) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return std::nullopt;
    bound = 10 * bound + (c - '0');
  }
  if (bound <= 0 || bound > (int64_t(1) << 24))
    return std::nullopt;
  return bound;
}

std::string kforge::readManifest(const std::string &directory, const std::string &name, Manifest &manifest) {
  std::string path = directory + "/" + name + ".json", why, text;
  // A manifest is a few kB: a bounded read of a regular file, so /dev/zero or a FIFO cannot stall the judge.
  int fd = openRegularFile(path, "manifest", /*noFollow=*/false, kMaxManifestBytes, why);
  if (fd < 0)
    return why;
  if (!readBounded(fd, kMaxManifestBytes, text))
    return "manifest '" + path + "' cannot be read, or is larger than 1 MB";
  nlohmann::json json = nlohmann::json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return "manifest '" + path + "' is not valid JSON";
  // Every field is type-checked before it is read: with exceptions off, a get<> of the wrong type aborts.
  auto field = [&](const nlohmann::json &object, const char *key, bool (nlohmann::json::*is)() const noexcept,
                   const char *type, const nlohmann::json *&found) -> std::string {
    auto it = object.find(key);
    found = it == object.end() ? nullptr : &*it;
    if (found && !((*found).*is)())
      return "manifest '" + path + "' has a '" + key + "' that is not " + type;
    return "";
  };
  const nlohmann::json *format = nullptr;
  if (auto e = field(json, "format", &nlohmann::json::is_string, "a string", format); !e.empty())
    return e;
  if (!format || format->get<std::string>() != "kforge-artifact/1")
    return "manifest '" + path + "' is not a kforge-artifact/1 manifest";
  manifest.directory = directory;
  for (auto [key, slot] : {std::pair<const char *, std::string *>{"entry", &manifest.entry},
                           {"library", &manifest.library},
                           {"hash", &manifest.hash}}) {
    const nlohmann::json *value = nullptr;
    if (auto e = field(json, key, &nlohmann::json::is_string, "a string", value); !e.empty())
      return e;
    *slot = value ? value->get<std::string>() : "";
  }
  // Fields kforge-run does not use are checked too (a string, or null where nothing applies: "recipe" of a
  // naive build), so a manifest is either well-formed or refused as a whole.
  for (const char *key : {"function", "schedule", "recipe", "kforge_version", "llvm_version"})
    if (auto it = json.find(key); it != json.end() && !it->is_string() && !it->is_null())
      return "manifest '" + path + "' has a '" + key + "' that is not a string";
  const nlohmann::json *flops = nullptr, *target = nullptr, *kind = nullptr;
  if (auto e = field(json, "flops", &nlohmann::json::is_number, "a number", flops); !e.empty())
    return e;
  if (flops)
    manifest.flops = flops->get<double>();
  if (auto e = field(json, "target", &nlohmann::json::is_object, "an object", target); !e.empty())
    return e;
  if (target) {
    if (auto e = field(*target, "kind", &nlohmann::json::is_string, "a string", kind); !e.empty())
      return e;
    if (kind)
      manifest.target = kind->get<std::string>();
  }
  if (manifest.entry.empty() || manifest.library.empty() || (manifest.target != "gpu" && manifest.target != "cpu"))
    return "manifest '" + path + "' lacks entry, library or a target kind of gpu/cpu";
  if (!isPlainFileName(manifest.library))
    return "manifest '" + path + "' names a library outside its directory ('" + manifest.library +
           "'): it must be a file name beside the manifest";
  if (!isIdentifier(manifest.entry))
    return "manifest '" + path + "' has an entry point that is not a C identifier";
  if (!std::isfinite(manifest.flops) || manifest.flops < 0)
    manifest.flops = 0;
  if (auto it = json.find("narrowest_rounding"); it != json.end() && !it->is_null()) {
    if (!it->is_string())
      return "manifest '" + path + "' has a narrowest_rounding that is not a string";
    manifest.narrowestRounding = it->get<std::string>();
  }

  auto arguments = json.find("arguments");
  if (arguments == json.end() || !arguments->is_array())
    return "manifest '" + path + "' has no argument list";
  if (arguments->size() > 64)
    return "manifest '" + path + "' has more than 64 arguments";
  int64_t total = 0;
  for (const nlohmann::json &argument : *arguments) {
    ManifestArgument parsed;
    if (!argument.is_object() || !argument.contains("role") || !argument["role"].is_string() ||
        !argument.contains("dtype") || !argument["dtype"].is_string() || !argument.contains("shape") ||
        !argument["shape"].is_array() || (argument.contains("index") && !argument["index"].is_number_integer()))
      return "manifest '" + path + "' has a malformed argument";
    std::string role = argument["role"].get<std::string>();
    if (role != "input" && role != "output")
      return "manifest '" + path + "' has an argument whose role is neither input nor output";
    parsed.isOutput = role == "output";
    parsed.dtype = argument["dtype"].get<std::string>();
    if (argument.contains("domain")) {
      if (!argument["domain"].is_string() || !parseDomain(argument["domain"].get<std::string>()))
        return "manifest '" + path +
               "' has an argument whose domain is neither \"positive\" nor \"index:N\" "
               "(0 < N <= 2^24)";
      parsed.domain = argument["domain"].get<std::string>();
    }
    if (argument["shape"].size() > 16)
      return "manifest '" + path + "' has a shape of more than 16 dimensions";
    int64_t elements = 1;
    for (const nlohmann::json &size : argument["shape"]) {
      if (!size.is_number_integer() || (size.is_number_unsigned() && size.get<uint64_t>() > uint64_t(INT64_MAX)) ||
          size.get<int64_t>() < 0)
        return "manifest '" + path + "' has a malformed shape";
      int64_t extent = size.get<int64_t>();
      if (extent > 0 && elements > kMaxElements / extent)
        return "manifest '" + path + "' has an argument of more than 2^34 elements, more than kforge-run can hold";
      elements *= extent;
      parsed.shape.push_back(extent);
    }
    total += elements;
    if (total > kMaxElements)
      return "manifest '" + path + "' has arguments of more than 2^34 elements in all, more than kforge-run can hold";
    manifest.arguments.push_back(std::move(parsed));
  }
  return "";
}
