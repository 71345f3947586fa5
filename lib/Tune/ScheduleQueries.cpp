//===- ScheduleQueries.cpp - what a schedule and a payload imply -----------===//
//
// Queries the definitions, the policies and the tools share: a schedule's slots, its block's extents and
// threads, the facts a kernel split's second half acts on, the lane counts of a row.
//
//===----------------------------------------------------------------------===//

#include "ActionDefinition.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace kforge::tune;
using llvm::StringRef;

llvm::ArrayRef<int64_t> kforge::tune::tileSizeDomain(StringRef level) {
  // Block / thread sizes a search may pick for a loop (0 leaves the loop whole); K steps.
  static const std::vector<int64_t> tileSizes = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  static const std::vector<int64_t> reductionSizes = {1, 2, 4, 8, 16, 32, 64};
  return level == "reduction" ? reductionSizes : tileSizes;
}

bool kforge::tune::irregularExtent(int64_t extent) { return extent > 0 && extent % 32 != 0; }

bool kforge::tune::lanesCountAllowed(int64_t count) {
  const ActionSpec *spec = findAction("lanes");
  return llvm::is_contained(spec->params[0].values, count) || (count > 32 && count <= 1024 && count % 32 == 0);
}

int64_t kforge::tune::rowWidth(const PayloadFacts &facts) {
  if (facts.parallelSizes.size() == 1 && facts.reductionSize > 0)
    return facts.reductionSize;
  return facts.parallelSizes.size() == 2 ? facts.parallelSizes[1] : 0;
}

/// Whether a 2-D root's reductions span its rows (a 1-D root is a row reduction). A GroupNorm after a Linear
/// reduces groups of the row (512 of 4096) in 3-D ops behind reshapes: split's row kernel, which reduces whole
/// rows, cannot reach them ("could not find next producer to fuse into container").
static bool reducesRootRows(const PayloadFacts &facts) {
  return facts.parallelSizes.size() != 2 || facts.reductionSize == facts.parallelSizes[1];
}

bool kforge::tune::splitApplies(const PayloadFacts &facts) {
  return !facts.contractionOp.empty() && facts.rootOp != facts.contractionOp && facts.reductionSize > 0 &&
         facts.contractionSizes.size() >= 2 && facts.contractionOps > 0 && rowWidth(facts) > 0 &&
         reducesRootRows(facts);
}

PayloadFacts kforge::tune::contractionFacts(const PayloadFacts &facts) {
  PayloadFacts head = facts;
  head.rootOp = facts.contractionOp;
  head.parallelSizes = facts.contractionSizes;
  head.reductionOps = 1;
  head.reductionSize = 0;
  head.linalgOps = facts.contractionOps;
  head.wholeDims.clear();
  return head;
}

bool kforge::tune::splitKApplies(const PayloadFacts &facts) {
  return facts.rootOp == "linalg.matmul" && facts.contractionOp == "linalg.matmul" && facts.linalgOps == 2 &&
         facts.parallelSizes.size() == 2 && facts.contractionK > 0;
}

bool kforge::tune::splitRowsApplies(const PayloadFacts &facts) {
  return facts.contractionOp.empty() && facts.reductionOps == 1 && facts.windowOps == 0 &&
         facts.multiResultReductions == 0 && facts.rowMoments == 0 && facts.wholeDims.empty() &&
         facts.rowIntermediates == 0 && facts.parallelSizes.size() == 1 && facts.reductionSize > 0 &&
         facts.reductionsReadingIndex == 0;
}

PayloadFacts kforge::tune::splitRowsFacts(const PayloadFacts &facts, int64_t partials) {
  PayloadFacts rest = facts;
  if (partials > 0)
    rest.reductionSize = partials;
  return rest;
}

/// A batch_matmul payload: its staged forms take one batch per block (tile(block, 1x...)); the block's unit
/// batch is folded away before bufferization, leaving a linalg.matmul for the staged ops.
bool kforge::tune::isBatchMatmul(const PayloadFacts &facts) {
  return facts.contractionOp == "linalg.batch_matmul" && facts.parallelSizes.size() == 3;
}
size_t kforge::tune::matmulRowDim(const PayloadFacts &facts) { return isBatchMatmul(facts) ? 1 : 0; }

/// A tile's rows and columns of the matmul (a batch_matmul's batch extent dropped).
std::vector<int64_t> kforge::tune::matmulTile(std::vector<int64_t> tile, const PayloadFacts &facts) {
  if (isBatchMatmul(facts) && tile.size() == 3)
    tile.erase(tile.begin());
  return tile;
}

bool kforge::tune::mmaApplies(const PayloadFacts &facts) {
  bool matmul = facts.contractionOp == "linalg.matmul" && facts.parallelSizes.size() == 2;
  // (K a multiple of 8 but not of 16: only the pipelined staged forms, their last tile zero-filled.)
  // The tensor cores accumulate in f32: a contraction that accumulates in bf16 / f16 (its result's type) is not
  // theirs to compute.
  return (matmul || isBatchMatmul(facts)) && facts.contractionK > 0 && facts.contractionK % 8 == 0 &&
         (facts.contractionOperandType == "bf16" || facts.contractionOperandType == "f16") &&
         (facts.contractionResultType.empty() || facts.contractionResultType == "f32");
}

bool kforge::tune::tf32Applies(const PayloadFacts &facts) {
  // The TF32 forms copy rows of whole 16-byte vectors (K a multiple of 4). mma.sync's read A as M x K; wgmma's
  // read both operands K-major, transposed by the cp.async stages' copies where they are not (A as K x M: the
  // wgmma forms only).
  return facts.allowTf32 && facts.contractionOp == "linalg.matmul" && facts.parallelSizes.size() == 2 &&
         facts.contractionK > 0 && facts.contractionK % 4 == 0 && facts.contractionOperandType == "f32" &&
         (facts.contractionResultType.empty() || facts.contractionResultType == "f32");
}

bool kforge::tune::transposeBApplies(const PayloadFacts &facts) {
  return facts.contractionOp == "linalg.matmul" && facts.contractionSizes.size() == 2 && facts.contractionK > 0 &&
         !facts.contractionATransposed && !facts.contractionBTransposed && facts.contractionBFromArgument &&
         facts.reductionOps == 1 && facts.windowOps == 0;
}

PayloadFacts kforge::tune::splitKFacts(const PayloadFacts &facts, int64_t parts) {
  PayloadFacts partial = facts;
  partial.rootOp = "linalg.generic";
  partial.contractionOp = "linalg.generic";
  partial.parallelSizes = {parts, facts.parallelSizes[0], facts.parallelSizes[1]};
  partial.contractionSizes = partial.parallelSizes;
  partial.contractionK = parts > 0 ? facts.contractionK / parts : facts.contractionK;
  partial.contractionOps = 2; // the partial matmul and the fill of its partials
  partial.linalgOps = 2;
  partial.reductionOps = 1;
  partial.reductionSize = 0;
  partial.wholeDims.clear();
  return partial;
}

const Action *kforge::tune::kernelSplit(const Schedule &schedule) {
  if (schedule.empty())
    return nullptr;
  const ActionDefinition *definition = findDefinition(schedule.front().kind);
  return definition && definition->splitsKernels() ? &schedule.front() : nullptr;
}

PayloadFacts kforge::tune::scheduledFacts(const Schedule &schedule, const PayloadFacts &facts) {
  const Action *split = kernelSplit(schedule);
  return split ? definitionOf(*split).splitFacts(*split, facts) : facts;
}

Schedule kforge::tune::withoutSplit(const Schedule &schedule) {
  Schedule rest;
  for (const Action &action : schedule) {
    const ActionDefinition *definition = findDefinition(action.kind);
    if (!definition || !definition->splitsKernels())
      rest.push_back(action);
  }
  return rest;
}

std::vector<int64_t> kforge::tune::lanesCounts(const PayloadFacts &facts) {
  int64_t width = rowWidth(facts);
  std::vector<int64_t> counts;
  for (int64_t count = 1; count <= 1024 && width > 0; ++count)
    if (lanesCountAllowed(count) && width % count == 0)
      counts.push_back(count);
  // A row no warp-multiple divides (4095, 1023, a vocabulary of 50257): whole warps, the last lanes of the
  // row owning one column fewer (distribute_rows_to_lanes sizes each lane's slice by its own count).
  if (counts.empty() || counts.back() < 32)
    for (int64_t count = 32; count <= 1024 && count <= width; count *= 2)
      counts.push_back(count);
  return counts;
}

const Action *kforge::tune::findSlot(const Schedule &schedule, StringRef kind, StringRef level) {
  for (const Action &action : schedule)
    if (action.kind == kind && action.level == level)
      return &action;
  return nullptr;
}

int64_t kforge::tune::blockExtent(const Schedule &schedule, const PayloadFacts &facts, size_t d) {
  const Action *block = findSlot(schedule, "tile", "block");
  if (block && d < block->sizes.size() && block->sizes[d] > 0)
    return block->sizes[d];
  return facts.parallelSizes[d];
}

std::vector<int64_t> kforge::tune::innermostTile(const Schedule &schedule, const PayloadFacts &facts) {
  const Action *thread = findSlot(schedule, "tile", "thread");
  std::vector<int64_t> extents;
  for (size_t d = 0; d < facts.parallelSizes.size(); ++d)
    extents.push_back(thread && d < thread->sizes.size() && thread->sizes[d] > 0 ? thread->sizes[d]
                                                                                 : blockExtent(schedule, facts, d));
  // lanes: each lane holds every count-th column of the row (of a 2-D root; a 1-D root's row is its reduction).
  if (const Action *lanes = findSlot(schedule, "lanes"); lanes && extents.size() >= 2 && lanes->value > 0)
    extents.back() = std::max<int64_t>(1, extents.back() / lanes->value);
  return extents;
}

std::vector<int64_t> kforge::tune::blockDims(const Schedule &schedule, const PayloadFacts &facts) {
  if (kernelSplit(schedule))
    return blockDims(withoutSplit(schedule), scheduledFacts(schedule, facts));
  std::vector<int64_t> dims = {1, 1, 1};
  const Action *thread = findSlot(schedule, "tile", "thread");
  if (!thread)
    return dims;
  // The last tiled loop maps to x, the one before to y, then z.
  std::vector<int64_t> counts;
  for (size_t d = 0; d < thread->sizes.size() && d < facts.parallelSizes.size(); ++d)
    if (thread->sizes[d] > 0)
      counts.push_back(threadsAlong(schedule, facts, d));
  // lanes: the row loop's threads move to y, and x holds the lanes of each row.
  if (const Action *lanes = findSlot(schedule, "lanes"))
    counts.push_back(lanes->value);
  // mma: each thread tile is a warp's; x holds its 32 lanes times the warps along x. Staged, the block is
  // one dimension of 32 lanes per warp of the grid.
  if (findSlot(schedule, "mma") && !counts.empty())
    counts.back() *= 32;
  if (findSlot(schedule, "stage")) {
    int64_t threads = 1;
    for (int64_t c : counts)
      threads *= c;
    counts = {threads + producerThreads(schedule)};
  }
  for (size_t i = 0; i < counts.size() && i < 3; ++i)
    dims[i] = counts[counts.size() - 1 - i];
  return dims;
}

int64_t kforge::tune::producerThreads(const Schedule &schedule) {
  if (!findSlot(schedule, "warp_specialize"))
    return 0;
  return findSlot(schedule, "producer_warpgroup") ? 128 : 32;
}

bool kforge::tune::stageIsImplicitGemm(const PayloadFacts &facts) {
  return !facts.implicitGemm.empty() && facts.contractionOp.empty();
}

kforge::tune::ImplicitGemmTile kforge::tune::implicitGemmTile(const Schedule &schedule, const PayloadFacts &facts) {
  ImplicitGemmTile tile;
  const Action *thread = findSlot(schedule, "tile", "thread");
  bool rows = false, cols = false; // (a row or column loop the block's threads share)
  for (size_t d = 0; d < facts.parallelSizes.size() && d < facts.implicitGemm.size(); ++d) {
    int64_t extent = blockExtent(schedule, facts, d);
    int64_t size = thread && d < thread->sizes.size() ? thread->sizes[d] : 0;
    if (size == 0 && extent > 1) {
      tile.serialLoops.push_back(static_cast<int64_t>(d));
      continue;
    }
    int64_t threads = size == 0 ? 1 : (extent + size - 1) / size;
    switch (facts.implicitGemm[d]) {
    case 'm':
      tile.m *= extent;
      tile.threadRows *= threads;
      rows = true;
      break;
    case 'n':
      tile.n *= extent;
      tile.threadCols *= threads;
      cols = true;
      break;
    default:
      if (extent != 1 && tile.problem.empty())
        tile.problem = "loop " + std::to_string(d) +
                       " is read by both sides of the implicit GEMM (a batch): its block tile must be 1, or the "
                       "thread tile must leave it whole (walked serially)";
    }
  }
  if ((!rows || !cols) && tile.problem.empty())
    tile.problem = std::string("the thread tile leaves every ") + (rows ? "column (N)" : "row (M)") +
                   " loop of the implicit GEMM whole (walked serially): its GEMM would have no " +
                   (rows ? "columns" : "rows");
  return tile;
}

int64_t kforge::tune::threadsAlong(const Schedule &schedule, const PayloadFacts &facts, size_t d) {
  const Action *thread = findSlot(schedule, "tile", "thread");
  int64_t size = thread && d < thread->sizes.size() ? thread->sizes[d] : 0;
  return size > 0 ? (blockExtent(schedule, facts, d) + size - 1) / size : 1;
}

bool kforge::tune::raggedAlong(const Schedule &schedule, const PayloadFacts &facts, size_t d) {
  const Action *block = findSlot(schedule, "tile", "block");
  const Action *thread = findSlot(schedule, "tile", "thread");
  if (d >= facts.parallelSizes.size())
    return false;
  if (block && d < block->sizes.size() && block->sizes[d] > 0 && facts.parallelSizes[d] % block->sizes[d] != 0)
    return true;
  return thread && d < thread->sizes.size() && thread->sizes[d] > 0 &&
         blockExtent(schedule, facts, d) % thread->sizes[d] != 0;
}

bool kforge::tune::raggedTiles(const Schedule &schedule, const PayloadFacts &facts) {
  for (size_t d = 0; d < facts.parallelSizes.size(); ++d)
    if (raggedAlong(schedule, facts, d))
      return true;
  return false;
}

std::string kforge::tune::raggedTilesBlocker(const Schedule &schedule, const PayloadFacts &facts) {
  static const llvm::StringRef kMasked[] = {"tile",      "fuse",           "vectorize",        "reorder",
                                            "occupancy", "max_registers"};
  // The staged, pipelined tensor-core gemm zero-fills its copies past a partial tile's edge (cp.async's source
  // size, TMA's out-of-bounds fill) and skips its stores there; its options ride along.
  // (TF32 changes only the element a 16-byte copy holds, four f32: K a multiple of 4, tf32's own rule. A
  // multicast copy is a TMA box like the others, zero-filled past the edge in both blocks of the pair; swap_ab
  // stores each element of C^T alone, under its guard.)
  static const llvm::StringRef kStagedMma[] = {"mma",  "stage",     "pipeline",   "ldmatrix",        "wgmma",
                                               "tma",  "overlap",   "persistent", "warp_specialize", "stage_epilogue",
                                               "tf32", "multicast", "swap_ab"};
  bool mma = findSlot(schedule, "mma") != nullptr;
  bool pipelinedMma = mma && findSlot(schedule, "stage") && findSlot(schedule, "pipeline");
  // The implicit GEMM (stage on a convolution, SIMT or with mma) clamps its reads and masks its stores, its
  // cp.async copies too.
  bool implicitGemm = findSlot(schedule, "stage") && stageIsImplicitGemm(facts);
  for (const Action &action : schedule) {
    if (action.kind == "tile" && action.level == "reduction")
      return "tile(reduction)";
    // The staged SIMT gemm (stage without mma) clamps a partial tile's loads and skips its stores past the edge.
    if (action.kind == "stage" && !mma)
      continue;
    if (pipelinedMma && llvm::is_contained(kStagedMma, llvm::StringRef(action.kind)))
      continue;
    if (implicitGemm && llvm::is_contained({"stage", "pipeline", "contiguous_copies", "mma", "wgmma"}, action.kind))
      continue;
    if (!llvm::is_contained(kMasked, llvm::StringRef(action.kind)))
      return action.kind;
  }
  return "";
}

int64_t kforge::tune::lanesRowWidth(const Schedule &schedule, const PayloadFacts &facts) {
  size_t rank = facts.parallelSizes.size();
  if (rank == 1 && facts.reductionSize > 0)
    return facts.reductionSize;
  return rank == 2 ? blockExtent(schedule, facts, rank - 1) : 0;
}

std::string kforge::tune::severalKernelsReason(const PayloadFacts &facts, bool gpu) {
  const std::string partition = "; the payload is several kernels: partition it (kforge-opt --kforge-partition; "
                                "kforge.compile, kforge.backend and bench/kernelbench do)";
  if (facts.contractionsAfterReductions > 0)
    return std::to_string(facts.contractionsAfterReductions) +
           " contraction(s) read the result of a reduction (chained Linear layers, a matmul after a norm): fused "
           "into their tiles, it would be recomputed for every tile, and left unfused, it would run on the host" +
           partition;
  if (gpu && facts.convolutionsBeforeWindows > 0)
    return std::to_string(facts.convolutionsBeforeWindows) +
           " convolution(s) feed a window op (a pooling): fused into its tiles, the convolution is computed point "
           "by point, not as its implicit GEMM (KernelBench's l2_conv2d_max_pool_relu, H100: 17.2 ms fused, "
           "against 2.3 ms for the same convolution alone)" +
           partition;
  // A contraction's result reduced over part of the root's rows: a block tile of the contraction holds none of
  // those reductions whole, and split's row kernel reduces whole rows (reducesRootRows).
  if (gpu && !facts.contractionOp.empty() && facts.rootOp != facts.contractionOp && facts.reductionSize > 0 &&
      !reducesRootRows(facts))
    return "the contraction's result is reduced over " + std::to_string(facts.reductionSize) +
           " elements, not over the root's rows of " + std::to_string(facts.parallelSizes[1]) +
           " (a group norm after a Linear): no block tile of the contraction holds such a reduction whole, and "
           "split's row kernel reduces whole rows" +
           partition;
  if (gpu && facts.nestedReductions > 0)
    return std::to_string(facts.nestedReductions) +
           " reduction(s) reduce over the results of other reductions (a loss's mean over per-row values): a GPU "
           "row kernel reduces one row per block and cannot give the outer reduction every row's result" +
           partition;
  return "";
}
