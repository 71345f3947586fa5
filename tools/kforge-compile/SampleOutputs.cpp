//===- SampleOutputs.cpp - kforge-compile --sample-outputs -----------------===//
//
// The host side of kforge's sampled reference check: kforge-tune asks for it when a problem is too large for
// the CPU build, and kforge-run compares the naive reference's elements at these positions with the values
// (--check-reference-samples). Inputs come from the runtime's generator, so they are the very values
// kforge-run draws for the seed; the values come from kforge's interpreter (kforge/Interpret/Interpreter.h).
//
//===----------------------------------------------------------------------===//

#include "SampleOutputs.h"

#include "kforge/Artifact/Artifact.h"
#include "kforge/Interpret/Interpreter.h"

#include "DType.h"
#include "Evaluation.h"
#include "Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <set>
#include <thread>

using namespace mlir;

namespace {
struct Sample {
  unsigned result;   ///< Which of the function's results.
  unsigned argument; ///< The manifest's argument it is.
  int64_t flat;
  double value = NAN;
  bool done = false;
};
} // namespace

namespace {
/// kforge-run's inputs for one seed, each block of kInputBlock values drawn when the interpreter first reads it
/// (by whichever thread gets there first) and kept: a softmax sampled on 512 of its 4096 rows draws an eighth
/// of its input.
class LazyInputs : public kforge::ArgumentSource {
public:
  LazyInputs(const std::vector<kforge::ManifestArgument> &arguments, const std::vector<kforge::DType> &types, int seed)
      : arguments(arguments), types(types), seed(seed), blocks(arguments.size()), storage(arguments.size()) {
    for (size_t i = 0; i < arguments.size(); ++i) {
      size_t count =
          arguments[i].isOutput ? 0 : (arguments[i].numElements() + kforge::kInputBlock - 1) / kforge::kInputBlock;
      blocks[i] = std::vector<std::atomic<const float *>>(count);
      for (auto &block : blocks[i])
        block.store(nullptr);
      storage[i].resize(count);
    }
  }
  unsigned blockBits() const override { return 20; }
  const float *block(unsigned argument, int64_t index) override {
    std::atomic<const float *> &slot = blocks[argument][index];
    if (const float *ready = slot.load(std::memory_order_acquire))
      return ready;
    std::lock_guard<std::mutex> lock(locks[index % kLocks]);
    if (const float *ready = slot.load(std::memory_order_acquire))
      return ready;
    size_t first = size_t(index) * kforge::kInputBlock;
    size_t count = std::min<size_t>(kforge::kInputBlock, arguments[argument].numElements() - first);
    storage[argument][index] = std::make_unique<float[]>(count);
    kforge::drawInputBlock(arguments[argument], types[argument], seed, argument, first, count,
                           storage[argument][index].get());
    drawn += count;
    slot.store(storage[argument][index].get(), std::memory_order_release);
    return storage[argument][index].get();
  }
  /// Values drawn so far.
  int64_t drawnValues() const { return drawn; }

private:
  static constexpr size_t kLocks = 64;
  const std::vector<kforge::ManifestArgument> &arguments;
  const std::vector<kforge::DType> &types;
  int seed;
  std::vector<std::vector<std::atomic<const float *>>> blocks;
  std::vector<std::vector<std::unique_ptr<float[]>>> storage;
  std::mutex locks[kLocks];
  std::atomic<int64_t> drawn{0};
};
} // namespace

static int failWith(const std::string &message) {
  llvm::errs() << "kforge-compile: error: --sample-outputs: " << message << "\n";
  return 1;
}

/// The positions to evaluate in an output of `shape`: its corners (the first and last element among them),
/// then, for each dimension, positions on its last index (where a partial tile's edge is) with the other
/// coordinates drawn at random, then distinct positions drawn uniformly; `count` in all where the output has
/// that many, the edges taking at most an eighth of them.
static std::vector<int64_t> choosePositions(const std::vector<int64_t> &shape, int count, uint64_t seed) {
  int64_t elements = 1;
  for (int64_t size : shape)
    elements *= size;
  std::set<int64_t> chosen;
  size_t rank = shape.size(), corners = rank > 4 ? 16 : size_t(1) << rank;
  for (size_t corner = 0; corner < corners && int(chosen.size()) < count; ++corner) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d)
      flat = flat * shape[d] + ((corner >> (d % 4)) & 1 ? shape[d] - 1 : 0);
    chosen.insert(flat);
  }
  std::mt19937_64 generator(seed);
  size_t perEdge = rank == 0 ? 0 : std::max<size_t>(1, size_t(count) / 8 / rank);
  for (size_t d = 0; d < rank; ++d)
    for (size_t k = 0; k < perEdge && int(chosen.size()) < count; ++k) {
      int64_t flat = 0;
      for (size_t e = 0; e < rank; ++e)
        flat = flat * shape[e] +
               (e == d ? shape[e] - 1 : std::uniform_int_distribution<int64_t>(0, shape[e] - 1)(generator));
      chosen.insert(flat);
    }
  std::uniform_int_distribution<int64_t> any(0, elements - 1);
  while (int64_t(chosen.size()) < std::min<int64_t>(count, elements))
    chosen.insert(any(generator));
  return std::vector<int64_t>(chosen.begin(), chosen.end());
}

int kforge::sampleOutputs(ModuleOp payload, const std::string &entryName, const SampleOptions &options) {
  auto started = std::chrono::steady_clock::now();
  FailureOr<std::string> entry = findEntry(payload, entryName);
  if (failed(entry))
    return 1;
  Manifest manifest;
  std::string manifestDir = llvm::sys::path::parent_path(options.manifestPath).str();
  std::string manifestName = llvm::sys::path::stem(options.manifestPath).str();
  if (std::string e = readManifest(manifestDir.empty() ? "." : manifestDir, manifestName, manifest); !e.empty())
    return failWith(e);
  std::vector<DType> types;
  for (const ManifestArgument &argument : manifest.arguments) {
    std::optional<DType> type = parseDType(argument.dtype);
    if (!type)
      return failWith("the manifest has a " + argument.dtype + " argument");
    types.push_back(*type);
  }

  // The interpreter reads the payload as written, its named ops generalized by upstream's pass only.
  OwningOpRef<ModuleOp> copy = payload.clone();
  if (failed(prepareForInterpretation(*copy)))
    return failWith("generalizing the payload's named ops failed");
  auto func = copy->lookupSymbol<func::FuncOp>(*entry);
  unsigned inputs = func.getNumArguments(), results = func.getNumResults();
  const std::vector<ManifestArgument> &arguments = manifest.arguments;
  bool matches = arguments.size() == inputs + results;
  for (unsigned i = 0; matches && i < arguments.size(); ++i)
    matches = arguments[i].isOutput == (i >= inputs);
  if (!matches)
    return failWith("the manifest's arguments are not the function's " + std::to_string(inputs) +
                    " tensor arguments followed by its " + std::to_string(results) +
                    " results (a payload that writes its arguments is not sampled)");

  LazyInputs data(arguments, types, options.seed);

  std::vector<Sample> samples;
  int perOutput = std::max(1, options.samples / int(std::max(1u, results)));
  for (unsigned r = 0; r < results; ++r)
    for (int64_t flat : choosePositions(arguments[inputs + r].shape, perOutput, 0x6b666f7267650000ull + r))
      samples.push_back({r, inputs + r, flat});

  // One interpreter per thread (each keeps its own reductions), built here: building reads the IR.
  unsigned threads = std::max(1u, std::min({std::thread::hardware_concurrency(), 16u, unsigned(samples.size())}));
  std::vector<std::unique_ptr<PayloadInterpreter>> interpreters;
  auto deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(options.seconds));
  for (unsigned t = 0; t < threads; ++t) {
    std::string error;
    interpreters.push_back(PayloadInterpreter::create(func, data, error));
    if (!interpreters.back())
      return failWith(error);
    interpreters.back()->setDeadline(deadline);
  }
  std::atomic<size_t> next{0};
  std::mutex failureLock;
  std::string failure;
  auto work = [&](PayloadInterpreter &interp) {
    for (size_t s; (s = next++) < samples.size();) {
      std::string error;
      std::optional<double> value = interp.evaluate(samples[s].result, samples[s].flat, error);
      if (!value) {
        std::lock_guard<std::mutex> lock(failureLock);
        if (failure.empty())
          failure = error;
        next = samples.size();
        return;
      }
      samples[s].value = *value;
      samples[s].done = true;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work, std::ref(*interpreters[t]));
  work(*interpreters[0]);
  for (std::thread &thread : pool)
    thread.join();

  // Running out of time keeps what was evaluated; any other failure is an error (the interpreter met
  // something it cannot evaluate correctly, and a partial answer would be misleading).
  bool timedOut = failure == "the time limit passed";
  if (!failure.empty() && !timedOut)
    return failWith(failure);
  llvm::json::Array groups;
  int64_t evaluated = 0, nonFinite = 0, iterations = 0;
  for (auto &interp : interpreters)
    iterations += interp->iterations();
  for (unsigned r = 0; r < results; ++r) {
    llvm::json::Array positions, elementValues;
    for (const Sample &sample : samples) {
      if (sample.result != r || !sample.done)
        continue;
      // A value float64 finds not finite proves nothing about the reference's (NaN compares unequal).
      if (!std::isfinite(sample.value)) {
        ++nonFinite;
        continue;
      }
      ++evaluated;
      positions.push_back(sample.flat);
      elementValues.push_back(sample.value);
    }
    groups.push_back(llvm::json::Object{
        {"argument", int64_t(inputs + r)}, {"positions", std::move(positions)}, {"values", std::move(elementValues)}});
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  llvm::json::Object out{{"format", "kforge-samples/1"},
                         {"seed", options.seed},
                         {"requested", int64_t(samples.size())},
                         {"evaluated", evaluated},
                         {"non_finite", nonFinite},
                         {"timed_out", timedOut},
                         {"iterations", iterations},
                         {"seconds", seconds},
                         {"outputs", std::move(groups)},
                         {"input_values_drawn", data.drawnValues()}};
  if (llvm::Error error = writeFileAtomically(options.outputPath, [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
      }))
    return failWith(llvm::toString(std::move(error)));
  if (evaluated == 0)
    return failWith(timedOut ? "no element was evaluated within " + std::to_string(options.seconds) + " s"
                             : "no element has a finite value");
  return 0;
}
