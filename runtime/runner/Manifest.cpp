//===- Manifest.cpp - an artifact's manifest ------------------------------===//

#include "Manifest.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <climits>
#include <cmath>
#include <fstream>
#include <sys/stat.h>

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

std::string kforge::readManifest(const std::string &directory, const std::string &name, Manifest &manifest) {
  std::string path = directory + "/" + name + ".json";
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    return "manifest '" + path + "' is not a regular file";
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return "cannot read manifest '" + path + "'";
  // A manifest is a few kB: a bounded read, so /dev/zero or a FIFO cannot make the judge read forever.
  std::string text(kMaxManifestBytes + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(file.gcount()));
  if (text.size() > kMaxManifestBytes)
    return "manifest '" + path + "' is larger than 1 MB";
  nlohmann::json json = nlohmann::json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return "manifest '" + path + "' is not valid JSON";
  if (json.value("format", "") != "kforge-artifact/1")
    return "manifest '" + path + "' is not a kforge-artifact/1 manifest";

  auto text_of = [&](const char *key) -> std::string {
    auto it = json.find(key);
    return it != json.end() && it->is_string() ? it->get<std::string>() : "";
  };
  manifest.directory = directory;
  manifest.entry = text_of("entry");
  manifest.library = text_of("library");
  manifest.hash = text_of("hash");
  if (auto flops = json.find("flops"); flops != json.end() && flops->is_number())
    manifest.flops = flops->get<double>();
  auto target = json.find("target");
  if (target != json.end() && target->is_object() && target->contains("kind") && (*target)["kind"].is_string())
    manifest.target = (*target)["kind"].get<std::string>();
  if (manifest.entry.empty() || manifest.library.empty() || (manifest.target != "gpu" && manifest.target != "cpu"))
    return "manifest '" + path + "' lacks entry, library or a target kind of gpu/cpu";
  if (!isPlainFileName(manifest.library))
    return "manifest '" + path + "' names a library outside its directory ('" + manifest.library +
           "'): it must be a file name beside the manifest";
  if (!isIdentifier(manifest.entry))
    return "manifest '" + path + "' has an entry point that is not a C identifier";
  if (!std::isfinite(manifest.flops) || manifest.flops < 0)
    manifest.flops = 0;

  auto arguments = json.find("arguments");
  if (arguments == json.end() || !arguments->is_array())
    return "manifest '" + path + "' has no argument list";
  if (arguments->size() > 64)
    return "manifest '" + path + "' has more than 64 arguments";
  int64_t total = 0;
  for (const nlohmann::json &argument : *arguments) {
    ManifestArgument parsed;
    if (!argument.is_object() || !argument.contains("role") || !argument.contains("dtype") ||
        !argument.contains("shape") || !argument["shape"].is_array())
      return "manifest '" + path + "' has a malformed argument";
    parsed.isOutput = argument["role"] == "output";
    parsed.dtype = argument["dtype"].is_string() ? argument["dtype"].get<std::string>() : "";
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
