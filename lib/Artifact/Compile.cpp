//===- Compile.cpp - payload + recipe -> shared object + manifest --------===//

#include "kforge/Artifact/Artifact.h"

#include "kforge/Pipelines/Pipelines.h"
#include "kforge/Transforms/ScheduleConfinement.h"
#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Transform/Transforms/Passes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <random>

#ifndef KFORGE_VERSION
#define KFORGE_VERSION "unknown"
#endif

using namespace mlir;

llvm::Error kforge::writeFileAtomically(StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  int fd;
  llvm::SmallString<256> temporary;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temporary))
    return llvm::createStringError(ec, "cannot create a file beside '%s': %s", path.str().c_str(),
                                   ec.message().c_str());
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.close(); // flushes; a full disk shows here at the latest
    ec = os.error();
    os.clear_error(); // checked: the stream must not abort the process when it is destroyed
  }
  if (!ec)
    ec = llvm::sys::fs::rename(temporary, path);
  if (ec) {
    llvm::sys::fs::remove(temporary);
    return llvm::createStringError(ec, "cannot write '%s': %s", path.str().c_str(), ec.message().c_str());
  }
  return llvm::Error::success();
}

/// writeFileAtomically, its error reported at `anchor`.
static LogicalResult writeFile(ModuleOp anchor, StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  if (llvm::Error error = kforge::writeFileAtomically(path, write))
    return anchor.emitError() << llvm::toString(std::move(error));
  return success();
}

static std::string joinPath(StringRef dir, StringRef file) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, file);
  return std::string(path);
}

static void enterStage(const kforge::ArtifactOptions &options, StringRef stage) {
  if (options.onStage)
    options.onStage(stage);
}

/// Parses the recipe on its own and checks its handle uses (a handle used after the op it was given to
/// consumed it), so a broken schedule is rejected before it touches the payload.
static LogicalResult checkRecipe(ModuleOp payload, const kforge::ArtifactOptions &options) {
  enterStage(options, "schedule-parse");
  OwningOpRef<ModuleOp> recipe = parseSourceFile<ModuleOp>(options.recipePath, payload.getContext());
  if (!recipe)
    return failure();
  // The interpreter looks for its entry point in the payload first: a payload must not carry a script.
  if (kforge::containsTransformScript(payload))
    return payload.emitError() << "the payload contains transform ops: a payload is what a schedule transforms, not "
                                  "a schedule";
  if (failed(kforge::checkScheduleConfined(*recipe, options.trusted ? kforge::ScheduleTrust::Trusted
                                                                     : kforge::ScheduleTrust::Untrusted)))
    return failure();
  enterStage(options, "check-uses");
  // The check only warns; a schedule that may use a consumed handle is rejected here.
  bool warned = false;
  ScopedDiagnosticHandler handler(payload.getContext(), [&](Diagnostic &diagnostic) {
    warned |= diagnostic.getSeverity() == DiagnosticSeverity::Warning;
    return failure(); // let the outer handler report it
  });
  PassManager pm(payload.getContext());
  pm.addPass(transform::createCheckUsesPass());
  if (failed(pm.run(*recipe)))
    return failure();
  if (warned)
    return recipe->emitError() << "the schedule may use a transform handle after it was consumed (warnings above)";
  return success();
}

/// Applies the recipe (if any): the same as -transform-preload-library + -transform-interpreter; or, for a
/// naive GPU reference, maps every op to its own one-thread-per-point kernel. The result is verified.
static LogicalResult schedule(ModuleOp payload, const kforge::ArtifactOptions &options) {
  PassManager pm(payload.getContext());
  pm.enableVerifier(false); // verified below, as a stage of its own
  if (options.naive && options.target == "gpu") {
    enterStage(options, "apply");
    pm.addPass(kforge::createKforgeSplitNaiveReductions()); // a loss's one long reduction: one thread otherwise
    kforge::buildBufferizeToDestinationPassingPipeline(pm, /*cInterface=*/false);
    pm.addPass(kforge::createKforgeCopiesToLinalg());
    pm.addPass(kforge::createKforgeMapToGpuNaive());
  } else if (!options.recipePath.empty()) {
    if (failed(checkRecipe(payload, options)))
      return failure();
    enterStage(options, "apply");
    transform::PreloadLibraryPassOptions preload;
    preload.transformLibraryPaths.push_back(options.recipePath);
    pm.addPass(transform::createPreloadLibraryPass(preload));
    pm.addPass(transform::createInterpreterPass());
  } else {
    return success();
  }
  if (failed(pm.run(payload)))
    return failure();
  enterStage(options, "verify");
  return verify(payload);
}

static LogicalResult lower(ModuleOp payload, const kforge::ArtifactOptions &options) {
  enterStage(options, "lower");
  PassManager pm(payload.getContext());
  // An artifact is loaded into the runner and into users' processes: nothing the payload or its schedule brought
  // in may run outside the kernels kforge compiles, before or after lowering.
  pm.addPass(kforge::createKforgeVerifyNoForeignCode());
  if (options.target == "gpu") {
    kforge::LowerToNVVMOptions nvvm;
    nvvm.chip = options.chip;
    nvvm.features = options.features;
    nvvm.optLevel = options.optLevel;
    nvvm.format = "fatbin";
    kforge::buildLowerToNVVMPipeline(pm, nvvm);
  } else {
    kforge::buildLowerToCPUPipeline(pm, kforge::LowerToCPUOptions());
  }
  pm.addPass(kforge::createKforgeVerifyArtifactCalls());
  return pm.run(payload);
}

/// Host object code for the lowered module.
static LogicalResult emitObject(ModuleOp payload, StringRef path) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module = translateModuleToLLVMIR(payload, llvmContext, "kforge_artifact");
  if (!module)
    return payload.emitError() << "translation to LLVM IR failed";

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return payload.emitError() << "no LLVM target for the host: " << error;
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", targetOptions, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Default));
  ExecutionEngine::setupTargetTripleAndDataLayout(module.get(), machine.get());

  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return payload.emitError() << "the host target cannot emit object files";
  codegen.run(*module);
  return writeFile(payload, path, [&](llvm::raw_ostream &file) { file << object; });
}

/// Links the object into a shared object with the system C compiler driver.
static LogicalResult link(ModuleOp anchor, StringRef object, StringRef library) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return anchor.emitError() << "no C compiler driver ('cc') on PATH to link the artifact";
  std::string message;
  // Linked beside its final name and renamed: a link cut short (a full disk) leaves the old library in place.
  std::string linking = (library + ".linking").str();
  // -Bsymbolic: the library's calls of its own functions bind to them, never to a same-named symbol already
  // loaded (a payload function named `exp` was called as libm's exp, which left every output unwritten).
  llvm::SmallVector<llvm::StringRef> argv{*cc, "-shared", "-Wl,-Bsymbolic", "-o", linking, object, "-lm"};
  int rc = llvm::sys::ExecuteAndWait(*cc, argv, std::nullopt, {}, /*SecondsToWait=*/120, /*MemoryLimit=*/0, &message);
  if (rc != 0) {
    llvm::sys::fs::remove(linking);
    return anchor.emitError() << "linking '" << library << "' failed (exit " << rc << ")"
                              << (message.empty() ? "" : ": " + message);
  }
  if (std::error_code ec = llvm::sys::fs::rename(linking, library)) {
    llvm::sys::fs::remove(linking);
    return anchor.emitError() << "cannot write '" << library << "': " << ec.message();
  }
  return success();
}

static std::string contentHash(StringRef payloadText, StringRef recipeText, const kforge::ArtifactOptions &options) {
  llvm::SHA256 hash;
  for (StringRef part : {payloadText, recipeText, StringRef(options.target), StringRef(options.entry),
                         StringRef(options.name), StringRef(options.chip), StringRef(options.features),
                         StringRef(KFORGE_VERSION), StringRef(LLVM_VERSION_STRING)}) {
    hash.update(part);
    hash.update(StringRef("\0", 1));
  }
  hash.update(std::to_string(options.optLevel));
  // How the library is linked (-Bsymbolic since 2026-12-05): an artifact cached before links differently.
  hash.update(StringRef("link:Bsymbolic"));
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

/// The files an artifact consists of, as suffixes of its base name.
static constexpr llvm::StringLiteral kArtifactFiles[] = {".so", ".json", ".scheduled.mlir", ".host.mlir"};

/// The file in a cache entry that vouches for the others.
static constexpr llvm::StringLiteral kIntegrityFile = "integrity";

/// Copies the artifact's files from `from` to `to` (both directories). Fails if a file is missing.
static bool copyArtifact(StringRef from, StringRef to, StringRef name) {
  for (StringRef suffix : kArtifactFiles)
    if (llvm::sys::fs::copy_file(joinPath(from, name.str() + suffix.str()), joinPath(to, name.str() + suffix.str())))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Cache integrity: an entry is used only if this user's key vouches for it
//===----------------------------------------------------------------------===//

/// HMAC-SHA-256 (RFC 2104) over llvm::SHA256.
static std::array<uint8_t, 32> hmacSha256(ArrayRef<uint8_t> key, ArrayRef<uint8_t> message) {
  constexpr size_t kBlock = 64;
  std::array<uint8_t, kBlock> block{};
  if (key.size() > kBlock) {
    std::array<uint8_t, 32> digest = llvm::SHA256::hash(key);
    std::copy(digest.begin(), digest.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<uint8_t, kBlock> inner, outer;
  for (size_t i = 0; i < kBlock; ++i) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  llvm::SHA256 innerHash;
  innerHash.update(inner);
  innerHash.update(message);
  std::array<uint8_t, 32> innerDigest = innerHash.final();
  llvm::SHA256 outerHash;
  outerHash.update(outer);
  outerHash.update(innerDigest);
  return outerHash.final();
}

/// This user's cache key: 32 random bytes (hex) in $KFORGE_CACHE_KEY_FILE or ~/.cache/kforge/cache.key, made (mode 0600,
/// through a rename) on first use. A run directory copied from elsewhere brings entries this key never signed.
static std::optional<std::string> cacheKeySecret() {
  llvm::SmallString<256> path;
  if (const char *explicitPath = std::getenv("KFORGE_CACHE_KEY_FILE"); explicitPath && *explicitPath) {
    path = explicitPath;
  } else {
    if (!llvm::sys::path::home_directory(path))
      return std::nullopt;
    llvm::sys::path::append(path, ".cache", "kforge", "cache.key");
  }
  auto read = [&]() -> std::optional<std::string> {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buffer || (*buffer)->getBufferSize() != 64)
      return std::nullopt;
    return (*buffer)->getBuffer().str();
  };
  if (std::optional<std::string> secret = read())
    return secret;
  if (llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path)))
    return std::nullopt;
  std::random_device random;
  std::string secret;
  for (int i = 0; i < 32; ++i)
    secret += llvm::toHex(static_cast<uint8_t>(random() & 0xff), /*LowerCase=*/true);
  int fd;
  llvm::SmallString<256> temporary;
  if (llvm::sys::fs::createUniqueFile(path + ".%%%%%%", fd, temporary, llvm::sys::fs::OF_None, 0600))
    return std::nullopt;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << secret;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return std::nullopt;
    }
  }
  // Two compiles may race to make the key: the first rename wins and both read what it left.
  if (llvm::sys::fs::exists(path))
    llvm::sys::fs::remove(temporary);
  else if (llvm::sys::fs::rename(temporary, path))
    return std::nullopt;
  return read();
}

/// What an entry's integrity file holds: the HMAC of its key and every artifact file (name, size, bytes).
static std::optional<std::string> entryDigest(StringRef secret, StringRef dir, StringRef name, StringRef key) {
  std::string message = key.str();
  for (StringRef suffix : kArtifactFiles) {
    auto buffer = llvm::MemoryBuffer::getFile(joinPath(dir, name.str() + suffix.str()), /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return std::nullopt;
    message += '\0' + suffix.str() + '\0' + std::to_string((*buffer)->getBufferSize()) + '\0';
    message += (*buffer)->getBuffer();
  }
  return llvm::toHex(hmacSha256(llvm::arrayRefFromStringRef(secret), llvm::arrayRefFromStringRef(message)),
                     /*LowerCase=*/true);
}

/// Copies a cache entry into the output directory and checks the copies (not the entry, which could change
/// after the check) against the entry's integrity file. False, with the copies removed, on any mismatch.
static bool restoreFromCache(ModuleOp anchor, const kforge::ArtifactOptions &options, StringRef key) {
  std::string entry = joinPath(options.cacheDir, key);
  if (!llvm::sys::fs::is_directory(entry))
    return false;
  std::optional<std::string> secret = cacheKeySecret();
  auto integrity = llvm::MemoryBuffer::getFile(joinPath(entry, kIntegrityFile));
  if (!secret || !integrity || !copyArtifact(entry, options.outputDir, options.name)) {
    anchor.emitRemark() << "artifact cache entry " << key << " is incomplete or cannot be checked: recompiling";
    return false;
  }
  std::optional<std::string> digest = entryDigest(*secret, options.outputDir, options.name, key);
  if (!digest || *digest != (*integrity)->getBuffer().trim()) {
    for (StringRef suffix : kArtifactFiles) {
      llvm::sys::fs::remove(joinPath(options.outputDir, options.name + suffix.str()));
      llvm::sys::fs::remove(joinPath(entry, options.name + suffix.str())); // so the fresh build can take its place
    }
    llvm::sys::fs::remove(joinPath(entry, kIntegrityFile));
    llvm::sys::fs::remove(entry);
    anchor.emitRemark() << "artifact cache entry " << key
                        << " failed its integrity check (changed, or made by another user or machine): recompiling";
    return false;
  }
  anchor.emitRemark() << "artifact cache hit " << key;
  return true;
}

/// Stores a finished artifact under <cacheDir>/<key>: copied into a fresh directory with its integrity file
/// first, then renamed into place, so a concurrent reader sees all of it or nothing. A failure to cache only
/// costs a later recompile.
static void storeInCache(const kforge::ArtifactOptions &options, StringRef key) {
  std::optional<std::string> secret = cacheKeySecret();
  if (!secret || llvm::sys::fs::create_directories(options.cacheDir))
    return;
  // createUniqueDirectory puts a relative model under the system's temporary directory: anchor it here.
  llvm::SmallString<256> model(joinPath(options.cacheDir, (key + ".partial").str()));
  if (llvm::sys::fs::make_absolute(model))
    return;
  llvm::SmallString<256> staging;
  if (llvm::sys::fs::createUniqueDirectory(model, staging))
    return;
  auto clean = [&] {
    for (StringRef suffix : kArtifactFiles)
      llvm::sys::fs::remove(joinPath(staging, options.name + suffix.str()));
    llvm::sys::fs::remove(joinPath(staging, kIntegrityFile));
    llvm::sys::fs::remove(staging);
  };
  if (!copyArtifact(options.outputDir, staging, options.name)) {
    clean();
    return;
  }
  std::optional<std::string> digest = entryDigest(*secret, staging, options.name, key);
  if (!digest) {
    clean();
    return;
  }
  if (llvm::Error error = kforge::writeFileAtomically(joinPath(staging, kIntegrityFile),
                                                      [&](llvm::raw_ostream &os) { os << *digest << "\n"; })) {
    llvm::consumeError(std::move(error));
    clean();
    return;
  }
  if (llvm::sys::fs::rename(staging, joinPath(options.cacheDir, key)))
    clean();
}

LogicalResult kforge::compileArtifact(ModuleOp payload, StringRef payloadText, StringRef recipeText,
                                      const ArtifactOptions &options) {
  if (options.target != "gpu" && options.target != "cpu")
    return payload.emitError() << "unknown target '" << options.target << "' (expected gpu or cpu)";
  if (options.naive && !options.recipePath.empty())
    return payload.emitError() << "a naive reference takes no recipe";
  // Importer IR (torch-mlir) into the forms the schedules, the naive mapping and the search's facts take;
  // every path (recipe, naive, untransformed CPU reference) compiles the same normalized payload.
  enterStage(options, "normalize");
  if (failed(normalizeImporterPayload(payload)))
    return failure();
  FailureOr<std::string> entry = findEntry(payload, options.entry);
  if (failed(entry))
    return failure();
  FailureOr<std::vector<ArgumentInfo>> arguments = describeEntryArguments(payload, *entry);
  if (failed(arguments))
    return failure();
  int64_t flops = countFlops(payload, *entry);
  // The narrowest float type the computation rounds an intermediate to (torch's bf16 layernorm rounds the
  // normalised value to bf16 before the weight): a result is only as precise as that rounding, whatever its
  // own type, and kforge-run's tolerance follows it (read from the reference's manifest, never a candidate's).
  std::optional<std::string> narrowestRounding;
  unsigned narrowestWidth = 0;
  payload.walk([&](arith::TruncFOp truncate) {
    auto type = dyn_cast<FloatType>(getElementTypeOrSelf(truncate.getType()));
    if (!type || (narrowestWidth && type.getWidth() >= narrowestWidth))
      return;
    narrowestWidth = type.getWidth();
    std::string name;
    llvm::raw_string_ostream os(name);
    type.print(os);
    narrowestRounding = name;
  });
  if (std::error_code ec = llvm::sys::fs::create_directories(options.outputDir))
    return payload.emitError() << "cannot create '" << options.outputDir << "': " << ec.message();
  std::string key = contentHash(payloadText, recipeText, options);
  if (!options.scheduleOnly && !options.cacheDir.empty() && restoreFromCache(payload, options, key))
    return success();
  auto file = [&](StringRef suffix) { return joinPath(options.outputDir, options.name + suffix.str()); };

  if (failed(schedule(payload, options)))
    return failure();
  if (failed(writeFile(payload, file(".scheduled.mlir"), [&](llvm::raw_ostream &os) { payload.print(os); os << "\n"; })))
    return failure();
  if (options.scheduleOnly)
    return success();
  // Whether the kernel multiplies fp32 operands in TF32 (the tf32 option of a schedule's wgmma): the manifest
  // says so, read from the code the schedule produced, not from what the schedule claims.
  bool tf32 = false;
  payload.walk([&](NVVM::WgmmaMmaAsyncOp mma) { tf32 |= mma.getTypeA() == NVVM::WGMMATypes::tf32; });
  payload.walk([&](NVVM::MmaOp mma) { tf32 |= mma.getMultiplicandAPtxType() == NVVM::MMATypes::tf32; });
  if (failed(lower(payload, options)))
    return failure();
  if (failed(writeFile(payload, file(".host.mlir"), [&](llvm::raw_ostream &os) { payload.print(os); os << "\n"; })))
    return failure();
  std::string object = file(".o");
  enterStage(options, "codegen");
  if (failed(emitObject(payload, object)))
    return failure();
  enterStage(options, "link");
  LogicalResult linked = link(payload, object, file(".so"));
  llvm::sys::fs::remove(object);
  if (failed(linked))
    return failure();

  enterStage(options, "manifest");
  llvm::json::Array args;
  for (auto [index, argument] : llvm::enumerate(*arguments)) {
    llvm::json::Array shape;
    for (int64_t size : argument.shape)
      shape.push_back(size);
    llvm::json::Object entry{{"index", static_cast<int64_t>(index)},
                             {"role", argument.role},
                             {"dtype", argument.dtype},
                             {"shape", std::move(shape)}};
    if (!argument.domain.empty())
      entry["domain"] = argument.domain;
    args.push_back(std::move(entry));
  }
  llvm::json::Object target{{"kind", options.target}};
  if (options.target == "gpu") {
    target["chip"] = options.chip;
    target["features"] = options.features;
    target["opt_level"] = options.optLevel;
    target["runtime"] = "libkforge_mgpu.so";
    // The kernels are compiled assuming it (kforge-align-kernel-arguments): callers must check.
    target["argument_alignment"] = 16;
  }
  llvm::json::Object manifest{
      {"format", "kforge-artifact/1"},
      {"function", *entry},
      {"entry", "_mlir_ciface_" + *entry},
      {"library", options.name + ".so"},
      {"target", std::move(target)},
      {"arguments", std::move(args)},
      {"flops", flops},
      {"narrowest_rounding", narrowestRounding ? llvm::json::Value(*narrowestRounding) : llvm::json::Value(nullptr)},
      // fp32 products computed with TF32 operands (10-bit mantissas): allowed only by kforge-tune --allow-tf32.
      {"tf32", tf32},
      {"recipe", options.recipePath.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(options.recipePath)},
      {"schedule", options.naive ? "naive" : (options.recipePath.empty() ? "none" : "recipe")},
      {"hash", key},
      {"kforge_version", KFORGE_VERSION},
      {"llvm_version", LLVM_VERSION_STRING},
  };
  if (failed(writeFile(payload, file(".json"), [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
      })))
    return failure();
  if (!options.cacheDir.empty())
    storeInCache(options, key);
  return success();
}
