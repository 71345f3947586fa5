//===- Manifest.cpp - an artifact's manifest ------------------------------===//

#include "Manifest.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace kforge;

int64_t ManifestArgument::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

std::string kforge::readManifest(const std::string &directory, const std::string &name, Manifest &manifest) {
  std::string path = directory + "/" + name + ".json";
  std::ifstream file(path);
  if (!file)
    return "cannot read manifest '" + path + "'";
  std::stringstream text;
  text << file.rdbuf();
  nlohmann::json json = nlohmann::json::parse(text.str(), /*cb=*/nullptr, /*allow_exceptions=*/false);
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

  auto arguments = json.find("arguments");
  if (arguments == json.end() || !arguments->is_array())
    return "manifest '" + path + "' has no argument list";
  for (const nlohmann::json &argument : *arguments) {
    ManifestArgument parsed;
    if (!argument.is_object() || !argument.contains("role") || !argument.contains("dtype") ||
        !argument.contains("shape") || !argument["shape"].is_array())
      return "manifest '" + path + "' has a malformed argument";
    parsed.isOutput = argument["role"] == "output";
    parsed.dtype = argument["dtype"].is_string() ? argument["dtype"].get<std::string>() : "";
    for (const nlohmann::json &size : argument["shape"]) {
      if (!size.is_number_integer() || size.get<int64_t>() < 0)
        return "manifest '" + path + "' has a malformed shape";
      parsed.shape.push_back(size.get<int64_t>());
    }
    manifest.arguments.push_back(std::move(parsed));
  }
  return "";
}
