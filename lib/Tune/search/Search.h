//===- Search.h - what kforge's built-in policies share ---------*- C++ -*-===//
//
// The building blocks of the random, evolutionary and heuristic policies: actions made in memory, the tile
// sizes a search draws from, the fusions a target requires, random draws; the mutations (Mutations.cpp), the
// ranked tile configurations (TileConfigs.cpp) and the heuristic's rules (Heuristic*.cpp). Internal to
// lib/Tune; the policies' interface is kforge/Tune/Policies.h.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TUNE_SEARCH_SEARCH_H
#define KFORGE_LIB_TUNE_SEARCH_SEARCH_H

#include "kforge/Tune/Policies.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <random>

namespace kforge::tune::search {

// Actions made in memory.
Action tile(llvm::StringRef level, std::vector<int64_t> sizes);
Action fuse(llvm::StringRef level);
Action unroll(int64_t factor);
Action vectorize();
Action recompute();
/// An action with one integer parameter (unroll, lanes, split, mma, stage, occupancy, ...) set to `value`.
Action intAction(llvm::StringRef kind, int64_t value);
/// The values an action with one integer parameter may take on this payload (its definition's searchValues).
std::vector<int64_t> intValues(llvm::StringRef kind, const PayloadFacts &facts);
inline constexpr llvm::StringRef kLaunchBounds[] = {"occupancy", "max_registers"};
/// Actions on the kernel's memory accesses, without parameters (set_kernel_attributes' cache requests).
inline constexpr llvm::StringRef kCacheActions[] = {"streaming_stores", "read_only_inputs", "loads_evict_last",
                                                    "loads_evict_first"};

// Sizes.
/// Block / thread sizes a search draws from (up to 256), and the K steps.
const std::vector<int64_t> &searchSizes();
const std::vector<int64_t> &kSteps();
std::vector<int64_t> dividing(int64_t extent, const std::vector<int64_t> &domain);
/// Block tile sizes for a loop: the powers of two that divide it, and for an irregular loop also its divisors
/// from 8 to 256 that are multiples of 4.
std::vector<int64_t> blockSizes(int64_t extent);
/// Lane counts for a row spread over several warps (one row per block), best guesses first.
std::vector<int64_t> blockLaneCounts(const PayloadFacts &facts);
/// Tile sizes of a random block (`thread`: thread) tile of the schedule.
std::vector<int64_t> randomSizes(const PayloadFacts &facts, const Schedule &s, bool thread, std::mt19937_64 &rng,
                                 const HardwareProfile &profile);

// Random draws.
bool coin(std::mt19937_64 &rng, double p);
template <typename T> const T &pick(std::mt19937_64 &rng, const std::vector<T> &items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}

// Schedules.
void sortByPhase(Schedule &s);
Action *slot(Schedule &s, llvm::StringRef kind, llvm::StringRef level = "");
const Action *slot(const Schedule &s, llvm::StringRef kind, llvm::StringRef level = "");
void removeSlot(Schedule &s, llvm::StringRef kind, llvm::StringRef level = "");
/// mma computes the matmul itself: the SIMT actions on it go.
void dropSimtMatmulActions(Schedule &s);
bool valid(const Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile);
bool gpu(const HardwareProfile &profile);
/// Adds the fusions the target requires (GPU: producers must follow every tiled level); `always`: on the CPU
/// too (the heuristic's choice: unfused producers run as plain loops).
void addRequiredFusions(Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile, bool always = false);
Schedule withSplit(const Action &split, Schedule contraction);

// Kernel splits (split, split_k).
/// split_k is worth proposing when the plain matmul's 64 x 64 tiles are too few blocks to fill the GPU twice.
bool fewBlocks(const PayloadFacts &facts, const HardwareProfile &profile);

// Mutations of the op a schedule schedules (a kernel split's first action already taken off).
Schedule randomScheduleOn(const PayloadFacts &facts, const HardwareProfile &profile, std::mt19937_64 &rng);
Schedule mutateScheduleOn(const Schedule &parent, const PayloadFacts &facts, const HardwareProfile &profile,
                          std::mt19937_64 &rng, bool aggressive, std::string &step);
Schedule mutateParametersOn(const Schedule &parent, const PayloadFacts &facts, const HardwareProfile &profile,
                            std::mt19937_64 &rng, std::string &step);
Schedule crossoverSchedulesOn(const Schedule &a, const Schedule &b, const PayloadFacts &facts,
                              const HardwareProfile &profile, std::mt19937_64 &rng);

// The heuristic.
/// A block tile x thread tile configuration with a rough merit, for ranking.
struct TileConfig {
  std::vector<int64_t> block, thread;
  int64_t k = 0;
  double merit = 0;
};
/// Blocks of one row over `lanes` lanes that fit on a multiprocessor at once (estimated).
int64_t residentRowBlocks(int64_t lanes, int64_t width, int64_t threadsPerMultiprocessor);
/// Matmul-like roots: output tiles that reuse operands, ranked.
std::vector<TileConfig> contractionConfigs(const PayloadFacts &facts, const HardwareProfile &profile);
/// Other roots (elementwise chains, row reductions, convolutions): ranked.
std::vector<TileConfig> rowConfigs(const PayloadFacts &facts, const HardwareProfile &profile);
/// Adds a proposal (made valid with the fusions it needs); returns its hash, empty when invalid or seen.
using AddProposal = llvm::function_ref<std::string(Schedule, std::string, std::string)>;
/// The tensor-core schedules the heuristic tries first for a bf16/f16 matmul.
void addTensorCoreProposals(const PayloadFacts &facts, const HardwareProfile &profile, AddProposal add);
/// stage on an fp32 convolution, its implicit GEMM (ImplicitGemmProposals.cpp): proposals for `add`.
void addImplicitGemmProposals(const PayloadFacts &facts, const HardwareProfile &profile, AddProposal add);
/// A direct window op (NCHW depthwise convolution, pooling): its batch over the threads (WindowProposals.cpp).
void addWindowBatchProposals(const PayloadFacts &facts, const HardwareProfile &profile, AddProposal add);
/// The heuristic's ordered first guesses for the op a schedule schedules.
std::vector<Proposal> heuristicSchedulesOn(const PayloadFacts &facts, const HardwareProfile &profile);

} // namespace kforge::tune::search

#endif // KFORGE_LIB_TUNE_SEARCH_SEARCH_H
