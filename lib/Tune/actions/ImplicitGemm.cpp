//===- ImplicitGemm.cpp - stage and mma on a convolution's implicit GEMM --===//

#include "ImplicitGemm.h"

#include "../Renderer.h"

#include "llvm/Support/MathExtras.h"

#include <optional>

using namespace kforge::tune;
using llvm::StringRef;

/// An action that rewrites the implicit GEMM whole (stage, mma) leaves nothing for the actions that schedule
/// its loops.
static void checkNothingElseSchedulesTheGemm(const Schedule &schedule, int index, StringRef kind,
                                             const ProblemSink &problem) {
  for (StringRef other : {"recompute", "lanes", "unroll", "vectorize"})
    if (findSlot(schedule, other))
      problem(index, "unsupported", kind + " computes the convolution itself: it does not combine with " + other);
  if (findSlot(schedule, "tile", "reduction"))
    problem(index, "unsupported",
            kind + " walks K itself, in tiles of block_k: it does not combine with tile(reduction)");
}

/// Two stages of the implicit GEMM's A and B tiles (fp32, block_k rows of M or N elements padded by 4).
static int64_t implicitGemmStageBytes(const ImplicitGemmTile &tile, int64_t blockK) {
  return 2 * blockK * ((tile.paddedM() + 4) + (tile.paddedN() + 4)) * 4;
}

/// stage on a convolution root (those transform.kforge.implicit_gemm_to_simt_staged checks): fp32, no batch loop
/// wider than 1 in a block unless walked serially, block_k a multiple of 4 up to K, 227 KB of shared memory.
void kforge::tune::checkImplicitGemmStage(const Schedule &schedule, const PayloadFacts &facts, int index,
                                          const ProblemSink &problem) {
  if (facts.implicitGemmType != "f32") {
    problem(index, "unsupported",
            "stage on a convolution is the fp32 implicit GEMM (SIMT); this one multiplies " +
                (facts.implicitGemmType.empty() ? std::string("mixed types") : facts.implicitGemmType));
    return;
  }
  if (!findSlot(schedule, "tile", "thread")) {
    problem(index, "precondition", "stage needs tile(thread) before it (each thread's share of the block tile)");
    return;
  }
  checkNothingElseSchedulesTheGemm(schedule, index, "stage", problem);
  ImplicitGemmTile tile = implicitGemmTile(schedule, facts);
  if (!tile.problem.empty()) {
    problem(index, "shape", "stage: " + tile.problem);
    return;
  }
  int64_t blockK = schedule[index].value;
  if (blockK <= 0 || blockK % 4 || blockK > facts.implicitGemmK)
    problem(index, "shape",
            "stage(" + std::to_string(blockK) + "): block_k must be a multiple of 4, at most K (" +
                std::to_string(facts.implicitGemmK) + ")");
  if (int64_t bytes = implicitGemmStageBytes(tile, blockK); bytes > kMaxSharedBytesPerBlock)
    problem(index, "too-large",
            "stage(" + std::to_string(blockK) + "): two stages of A and B take " + std::to_string(bytes) +
                " bytes of shared memory; a block has at most " + std::to_string(kMaxSharedBytesPerBlock));
}

/// contiguous_copies' copy_order attribute of implicit_gemm_to_simt_staged (none: its default, k_groups).
static std::string implicitGemmCopyOrder(const Schedule &schedule) {
  const Action *contiguous = findSlot(schedule, "contiguous_copies");
  if (!contiguous)
    return "";
  return contiguous->value ? ", copy_order = \"contiguous_longest_k\"" : ", copy_order = \"contiguous\"";
}

/// The fragment of an implicit GEMM's rewrite: `op` on the block's convolution (marked kforge.implicit_gemm
/// before tiling) in the bufferized function (`funcBase`: its handle's name), its attributes `head`, the tile's
/// serial loops, then `tail`; then CSE.
static void renderOnBlockConvolution(Renderer &r, size_t index, const Schedule &schedule, const std::string &what,
                                     StringRef funcBase, StringRef op, const std::string &head,
                                     const std::string &tail) {
  ImplicitGemmTile tile = implicitGemmTile(schedule, r.facts);
  r.line("    // action " + std::to_string(index) + ": " + describe(schedule[index]) + ": " + what);
  std::string func = r.fresh(funcBase), roots = r.fresh("block_convolutions");
  r.line("    " + func + " = " + r.matchFunc("%bufferized"));
  r.line("    " + roots + " = transform.structured.match attributes{kforge.implicit_gemm} in " + func + " : " +
         Renderer::kUnary);
  std::string serial = tile.serialLoops.empty()
                           ? std::string()
                           : ", serial_loops = array<i64: " + joinInts(tile.serialLoops, ", ") + ">";
  r.line("    " + op.str() + " " + roots + " {" + head + serial + tail + "} : (!transform.any_op) -> ()");
  r.line("    transform.apply_cse to " + func + " : !transform.any_op");
}

/// stage on a convolution: the block's convolution as its implicit GEMM.
void kforge::tune::renderImplicitGemmStage(Renderer &r, size_t index, const Schedule &schedule) {
  ImplicitGemmTile tile = implicitGemmTile(schedule, r.facts);
  renderOnBlockConvolution(
      r, index, schedule,
      "the block's convolution as its implicit GEMM through shared memory, each thread's share in registers",
      "stage_func", "transform.kforge.implicit_gemm_to_simt_staged",
      "block_k = " + std::to_string(schedule[index].value) + ", thread_grid = array<i64: " +
          std::to_string(tile.threadRows) + ", " + std::to_string(tile.threadCols) + ">",
      (findSlot(schedule, "pipeline") ? ", async_copies" : "") + implicitGemmCopyOrder(schedule));
}

/// The tensor-core implicit GEMM's block tile: rows padded to whole 16-row tiles per warp row, columns to whole
/// 16-column pairs per warp column (transform.kforge.implicit_gemm_to_mma_sync).
static std::pair<int64_t, int64_t> mmaPadded(const ImplicitGemmTile &tile) {
  return {static_cast<int64_t>(llvm::alignTo(tile.m, 16 * tile.threadRows)),
          static_cast<int64_t>(llvm::alignTo(tile.n, 16 * tile.threadCols))};
}

/// The stages of A and B in 16-bit elements, each staged along K or along its rows or columns (whichever is
/// larger: the op picks by the layout), rows padded by 8.
static int64_t mmaStageBytes(const ImplicitGemmTile &tile, int64_t blockK, int64_t stages) {
  auto [m, n] = mmaPadded(tile);
  auto side = [&](int64_t mn) { return std::max(mn * (blockK + 8), blockK * (mn + 8)); };
  return stages * (side(m) + side(n)) * 2;
}

/// wgmma's warp grid on the tile: [4 gm, gn], gm = ceil(m / 64) warpgroup rows of 64 rows and the tile's
/// other warpgroups along the columns; nullopt when its warps are not whole warpgroups of gm rows.
static std::optional<std::pair<int64_t, int64_t>> wgmmaGrid(const ImplicitGemmTile &tile) {
  int64_t warps = tile.threadRows * tile.threadCols, gm = llvm::divideCeil(tile.m, 64);
  if (warps % (4 * gm))
    return std::nullopt;
  return std::make_pair(4 * gm, warps / (4 * gm));
}

/// wgmma's columns: padded to whole 64-column atoms per warpgroup column (the op pads to 8-column tiles where
/// its B is staged along K; this bound is the larger).
static int64_t wgmmaColumns(const ImplicitGemmTile &tile, int64_t warpgroupCols) {
  return static_cast<int64_t>(llvm::alignTo(tile.n, 64 * warpgroupCols));
}

/// The tensor-core implicit GEMM's stages: pipeline's, else two.
static int64_t mmaStages(const Schedule &schedule) {
  const Action *pipeline = findSlot(schedule, "pipeline");
  return pipeline && pipeline->value > 2 ? pipeline->value : 2;
}

/// wgmma on a convolution's implicit GEMM (transform.kforge.implicit_gemm_to_mma_sync's wgmma): one swizzled
/// row of K per tile, whole warpgroups of 64 rows covering the block's rows, each warpgroup column's share of
/// the columns one instruction's N, the stages within a block's shared memory.
static void checkImplicitGemmWgmma(const Schedule &schedule, const ImplicitGemmTile &tile, int64_t blockK, int index,
                                   const ProblemSink &problem) {
  // (One 128-byte swizzled row of K per tile: 64 16-bit elements, or 32 f32 with tf32.)
  int64_t row = findSlot(schedule, "tf32") ? 32 : 64;
  if (blockK != row)
    problem(index, "shape",
            "mma with wgmma on a convolution takes stage(" + std::to_string(row) +
                ") (one 128-byte swizzled row of K per tile), not stage(" + std::to_string(blockK) + ")");
  int64_t warps = tile.threadRows * tile.threadCols;
  std::optional<std::pair<int64_t, int64_t>> grid = wgmmaGrid(tile);
  if (!grid || warps > 32) {
    problem(index, "shape",
            "wgmma: the thread tile makes " + std::to_string(warps) + " warps; the block's " + std::to_string(tile.m) +
                " rows take " + std::to_string(llvm::divideCeil(tile.m, 64)) +
                " warpgroup rows of 64 (4 warps each), and its warps must be whole such rows of warpgroups, at most "
                "32 warps");
    return;
  }
  int64_t columns = wgmmaColumns(tile, grid->second);
  if (columns / grid->second > 256)
    problem(index, "too-large",
            "wgmma: the block's " + std::to_string(tile.n) + " columns over " + std::to_string(grid->second) +
                " warpgroup columns are " + std::to_string(columns / grid->second) +
                " a warpgroup (padded to 64); one instruction's N is at most 256");
  int64_t stages = mmaStages(schedule);
  int64_t bytes = stages * (16 * grid->first + columns) * 128;
  if (bytes > kMaxSharedBytesPerBlock)
    problem(index, "too-large",
            "wgmma: " + std::to_string(stages) + " swizzled stages of A and B take " + std::to_string(bytes) +
                " bytes of shared memory; a block has at most " + std::to_string(kMaxSharedBytesPerBlock));
}

void kforge::tune::checkImplicitGemmMma(const Schedule &schedule, const PayloadFacts &facts, int index,
                                        const ProblemSink &problem) {
  // (f32 multiplicands as TF32: the tf32 action checks the rest.)
  bool tf32 = findSlot(schedule, "tf32") && facts.implicitGemmType == "f32";
  if (facts.implicitGemmMmaType.empty() && !tf32) {
    problem(index, "unsupported",
            "mma on a convolution needs bf16 or f16 multiplicands (as read, or extended to f32 in the body) and "
            "an f32 output, or f32 ones with tf32 (--allow-tf32); this one multiplies " +
                (facts.implicitGemmType.empty() ? std::string("mixed types") : facts.implicitGemmType));
    return;
  }
  if (!findSlot(schedule, "tile", "thread")) {
    problem(index, "precondition", "mma needs tile(thread) before it (its tile is a warp's)");
    return;
  }
  const Action *stage = findSlot(schedule, "stage");
  if (!stage) {
    problem(index, "precondition",
            "mma on a convolution is staged: stage(block_k) after it (its implicit GEMM copies each K tile into "
            "shared memory)");
    return;
  }
  checkNothingElseSchedulesTheGemm(schedule, index, "mma", problem);
  for (StringRef option : {"ldmatrix", "contiguous_copies", "tma", "warp_specialize", "stage_epilogue"})
    if (findSlot(schedule, option))
      problem(index, "unsupported",
              "mma on a convolution takes stage, pipeline, wgmma, overlap and tf32 alone (fragments by ldmatrix or "
              "wgmma's descriptors, 16-byte cp.async where the layout allows): not " +
                  option);
  if (schedule[index].value != 1)
    problem(index, "unsupported", "mma on a convolution takes block_k / 16 steps of K per tile: use mma(1)");
  ImplicitGemmTile tile = implicitGemmTile(schedule, facts);
  if (!tile.problem.empty()) {
    problem(index, "shape", "mma: " + tile.problem);
    return;
  }
  if (findSlot(schedule, "wgmma")) {
    checkImplicitGemmWgmma(schedule, tile, stage->value, index, problem);
    return;
  }
  int64_t warps = tile.threadRows * tile.threadCols;
  auto [m, n] = mmaPadded(tile);
  if (warps > 32)
    problem(index, "too-large",
            "mma: the thread tile makes " + std::to_string(warps) + " warps; a block has at most 32");
  else if ((m / tile.threadRows) * (n / tile.threadCols) > 64 * 64)
    problem(index, "too-large",
            "mma: each warp's tile (" + std::to_string(m / tile.threadRows) + "x" +
                std::to_string(n / tile.threadCols) +
                " of the implicit GEMM, padded to whole 16x16 tiles) is above "
                "64x64 (its accumulators live in registers)");
  int64_t blockK = stage->value;
  if (blockK <= 0 || blockK % 16 || blockK > static_cast<int64_t>(llvm::alignTo(facts.implicitGemmK, 16)))
    problem(index, "shape",
            "stage(" + std::to_string(blockK) + ") with mma: block_k must be a multiple of 16, at most K (" +
                std::to_string(facts.implicitGemmK) + ") rounded up to 16");
  else if (int64_t bytes = mmaStageBytes(tile, blockK, mmaStages(schedule)); bytes > kMaxSharedBytesPerBlock)
    problem(index, "too-large",
            "stage(" + std::to_string(blockK) + "): " + std::to_string(mmaStages(schedule)) +
                " stages of A and B take " + std::to_string(bytes) + " bytes of shared memory; a block has at most " +
                std::to_string(kMaxSharedBytesPerBlock));
}

void kforge::tune::renderImplicitGemmMma(Renderer &r, size_t index, const Schedule &schedule) {
  ImplicitGemmTile tile = implicitGemmTile(schedule, r.facts);
  bool wgmma = findSlot(schedule, "wgmma");
  // (wgmma: the same warps as warpgroups, 64 rows each, stacked over the block's rows.)
  std::pair<int64_t, int64_t> grid = {tile.threadRows, tile.threadCols};
  if (wgmma)
    grid = *wgmmaGrid(tile);
  renderOnBlockConvolution(
      r, index, schedule,
      wgmma ? "the block's convolution as its implicit GEMM on Hopper's warpgroup MMA, the thread tiles' warps as "
              "warpgroups"
            : "the block's convolution as its implicit GEMM on tensor cores, each thread tile a warp's",
      "mma_func", "transform.kforge.implicit_gemm_to_mma_sync",
      "block_k = " + std::to_string(findSlot(schedule, "stage")->value) +
          ", warp_grid = array<i64: " + std::to_string(grid.first) + ", " + std::to_string(grid.second) + ">",
      (mmaStages(schedule) > 2 ? ", stages = " + std::to_string(mmaStages(schedule)) : "") +
          (wgmma ? std::string(", wgmma") : std::string()) +
          (findSlot(schedule, "overlap") ? std::string(", wgmma_in_flight = 1") : std::string()) +
          (findSlot(schedule, "tf32") ? std::string(", tf32") : std::string()));
}
