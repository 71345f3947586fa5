//===- Tiling.cpp - tile, fuse, unroll, vectorize, recompute, reorder ------===//
//
// The actions on the payload's loops while it is still on tensors: tiles at block / thread / reduction level,
// producers fused into them, the K loop unrolled, the innermost tile vectorized, producers recomputed in their
// consumers, and the root's loops reordered.
//
//===----------------------------------------------------------------------===//

#include "../ActionDefinition.h"
#include "../Renderer.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

using namespace kforge::tune;
using llvm::StringRef;

/// The most elements one vectorized op of the innermost tile may have: beyond this the vector code is slow to
/// compile and spills (a thread of a GPU block, or one iteration of the CPU's innermost loop).
static constexpr int64_t kMaxVectorElements = 512;
static constexpr int64_t kMaxLocalBytesPerThread = 512 * 1024; ///< CUDA's local memory limit per thread.
/// The most output points a SIMT contraction's thread tile may have on the GPU (an accumulator register each).
static constexpr int64_t kMaxSimtAccumulators = 256;
/// The most output points a thread of a convolution's staged SIMT implicit GEMM (stage without mma) may have.
/// Besides its accumulators a thread holds a fragment of each operand and the stages' addresses: ptxas for
/// sm_90a on a 7x7 stride-2 convolution's forms, 64 points 213 registers, 128 points 219-255 with at most 48
/// bytes spilled, 256 points 255 registers and 2-7 KB spilled, 512 points 24-33 KB spilled and a 20-30 s
/// compile that held its whole batch of the search.
static constexpr int64_t kMaxStagedConvAccumulators = 128;

/// Staged mma: the thread tile only sizes the warp grid; the block's matmul is rewritten whole.
/// `what`: what the tile action or the fuse action comes to there.
static bool stagedWarpTile(Renderer &r, const Action &action, const Schedule &schedule, llvm::StringRef what) {
  if (!findSlot(schedule, "stage") || action.level != "thread")
    return false;
  r.line("    // (staged mma: the warp tiles " + what.str() + ")");
  return true;
}

namespace {

//===----------------------------------------------------------------------===//
// tile
//===----------------------------------------------------------------------===//

class TileAction : public ActionDefinition {
public:
  TileAction()
      : ActionDefinition(
            ActionSpec{
                "tile",
                "Tile the root op's parallel loops into a block- or thread-level scf.forall, or a contraction's "
                "reduction "
                "loop into an scf.for.",
                "transform.structured.tile_using_forall (block, thread: mapped to #gpu.block / #gpu.thread on the "
                "GPU), "
                "transform.structured.tile_using_for (reduction)",
                {{"level", ParamType::Enum, {}, {"block", "thread", "reduction"}, "which loop level"},
                 {"sizes",
                  ParamType::IntList,
                  tileSizeDomain("block").vec(),
                  {},
                  "block/thread: one size per parallel loop of the root (0: whole loop), at most the loop's (the "
                  "block tile's) extent; a size that does not divide it leaves a partial tile at its end, masked "
                  "(tile, fuse, vectorize (elementwise payloads) and the staged SIMT gemm); a block size may also be "
                  "any divisor of a loop that is not a multiple of 32 (irregular shapes). "
                  "reduction: one size for the contraction's K loop, from 1, 2, 4, 8, 16, 32, 64"}},
                {"gpu", "cpu"},
                "sizes divide the loop sizes, except on the masked path (tile, fuse, vectorize, reorder, launch "
                "bounds, stage without mma; no fused row reduction); thread needs block; reduction needs a "
                "contraction (linalg.matmul or "
                "linalg.batch_matmul) in the payload; on the GPU at most 3 tiled loops per level and 1024 threads per "
                "block"},
            {{"block", 10}, {"thread", 30}, {"reduction", 54}}) {}

  void checkParsed(const Action &action, int index, std::vector<Problem> &problems) const override {
    if (action.level.empty())
      return;
    if (action.level == "reduction" && action.sizes.size() != 1)
      problems.push_back({index, "bad-param", "tile(reduction) takes one size, for the contraction's K loop"});
    checkTileDomain(action, index, problems);
  }

  void checkDomain(const ValidationContext &context) const override {
    std::vector<Problem> problems;
    checkTileDomain(context.action(), static_cast<int>(context.index), problems, &context.facts,
                    findSlot(context.schedule, "tile", "block"));
    for (const Problem &p : problems)
      context.problem(p.code, p.message);
  }

  void validate(const ValidationContext &context) const override {
    const Action &action = context.action();
    if (action.level == "thread" && !context.before("tile", "block"))
      context.problem("precondition", "tile(thread) needs tile(block) before it");
    if (action.level == "reduction")
      checkReductionTile(context);
    else
      checkParallelTile(context);
  }

  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    const Action &action = schedule[index];
    if (stagedWarpTile(r, action, schedule, "size the warp grid"))
      return true;
    if (action.level == "reduction") {
      std::string contraction = r.fresh("contraction"), tiled = r.fresh("k_tiled");
      r.kLoop = r.fresh("k_loop");
      // The contraction's loops: its parallel ones and K (the r.facts of runs recorded before contraction_sizes
      // existed: a batch_matmul has 4, a matmul 3).
      int loops = !r.facts.contractionSizes.empty() ? static_cast<int>(r.facts.contractionSizes.size()) + 1
                  : r.facts.contractionOp == "linalg.batch_matmul" ? 4
                                                                   : 3;
      std::vector<int64_t> sizes(loops, 0);
      sizes.back() = action.sizes[0];
      r.line("    " + contraction + " = transform.structured.match ops{[\"" + r.facts.contractionOp + "\"]} in " +
             r.inner + " : " + r.kUnary);
      r.line("    " + tiled + ", " + r.kLoop + " = transform.structured.tile_using_for " + contraction +
             " tile_sizes [" + joinInts(sizes, ", ") + "] : " + r.kPair);
      return true;
    }
    std::string tiled = r.fresh(action.level + "_root"), loop = r.fresh(action.level + "_loop");
    // With mma, a thread-level tile is a warp's.
    std::string unit = action.level == "block" ? "block" : findSlot(schedule, "mma") ? "warp" : "thread";
    std::string map = r.gpu ? " (mapping = " + r.mapping(action.sizes, unit) + ")" : "";
    // Partial tiles on the GPU: a thread loop over a partial block tile would have a dynamic trip count, which
    // the mapping to threads refuses; ceil(block / thread) threads each take at most the thread tile instead.
    std::string how = "tile_sizes [" + joinInts(action.sizes, ", ") + "]";
    if (r.gpu && action.level == "thread" && raggedTiles(schedule, r.facts)) {
      std::vector<int64_t> threads;
      for (size_t d = 0; d < action.sizes.size(); ++d)
        threads.push_back(action.sizes[d] > 0 ? threadsAlong(schedule, r.facts, d) : 0);
      how = "num_threads [" + joinInts(threads, ", ") + "]";
    }
    r.line("    " + tiled + ", " + loop + " = transform.structured.tile_using_forall " + r.root + " " + how + map +
           " : " + r.kPair);
    r.root = tiled;
    r.inner = loop;
    (action.level == "block" ? r.blockLoop : r.threadLoop) = loop;
    return true;
  }

  std::vector<int64_t> searchValues(const PayloadFacts &) const override { return {}; }

private:
  /// Every tile size in its level's domain: the powers of two; at block level also a divisor of an irregular
  /// loop (2000 = 16 x 125 has no power-of-two tile above 16: 80 or 125 are the useful ones). A tile size
  /// outside the level's domain is allowed where the tiled extent is irregular (not a multiple of 32) and the
  /// size divides it: the loop's extent for a block tile, the block's for a thread tile (`block`, when the
  /// schedule has one; e.g. 16x40 warp tiles of 80x120 blocks of a 2000x3000 matmul). Without facts (parsing)
  /// such sizes are left to the validation against the payload.
  static void checkTileDomain(const Action &action, int index, std::vector<Problem> &problems,
                              const PayloadFacts *facts = nullptr, const Action *block = nullptr) {
    llvm::ArrayRef<int64_t> domain = tileSizeDomain(action.level);
    bool dividing = action.level == "block" || action.level == "thread";
    for (auto [d, size] : llvm::enumerate(action.sizes)) {
      if (llvm::is_contained(domain, size))
        continue;
      bool deferred = dividing && size > 0 && size <= domain.back();
      if (deferred && !facts)
        continue;
      int64_t extent = facts && d < facts->parallelSizes.size() ? facts->parallelSizes[d] : 0;
      if (action.level == "thread" && block && d < block->sizes.size() && block->sizes[d] > 0)
        extent = block->sizes[d];
      if (deferred && irregularExtent(extent) && extent % size == 0)
        continue;
      problems.push_back({index, "out-of-domain",
                          "tile(" + action.level + ") size " + std::to_string(size) + " is not one of " +
                              joinInts(domain, ", ") +
                              (dividing ? " (or, for an extent that is not a multiple of 32, a divisor of it)" : "")});
    }
  }

  static void checkReductionTile(const ValidationContext &context) {
    const Action &action = context.action();
    const PayloadFacts &facts = context.facts;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
    std::string innermost = before("tile", "thread") ? "thread" : before("tile", "block") ? "block" : "";
    if (!facts.contractionOp.empty() && facts.rootOp != facts.contractionOp && !innermost.empty() &&
        !before("fuse", innermost))
      problem(index, "precondition",
              "tile(reduction): the contraction is a producer of the root, outside the " + innermost + " loop; fuse(" +
                  innermost + ") first");
    if (facts.contractionOp.empty()) {
      problem(index, "precondition", "tile(reduction) needs a contraction (linalg.matmul or linalg.batch_matmul)");
    } else if (!action.sizes.empty() &&
               (action.sizes[0] > facts.contractionK || facts.contractionK % action.sizes[0] != 0)) {
      problem(index, "shape",
              "tile(reduction) size " + std::to_string(action.sizes[0]) +
                  " does not divide K = " + std::to_string(facts.contractionK));
    }
  }

  /// A block or thread tile: one size per parallel loop of the root, dividing it; at most 3 tiled loops on the
  /// GPU; within the limits of a thread's registers and local memory and a block's threads.
  static void checkParallelTile(const ValidationContext &context) {
    const Action &action = context.action();
    const PayloadFacts &facts = context.facts;
    size_t rank = facts.parallelSizes.size();
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    if (action.sizes.size() != rank) {
      problem(index, "shape",
              "tile(" + action.level + ") needs " + std::to_string(rank) +
                  " sizes, one per parallel loop of the root " + facts.rootOp + " (loop sizes " +
                  joinInts(facts.parallelSizes, "x") + ")");
      return;
    }
    checkDividing(context);
    checkThreadLimits(context);
  }

  static void checkDividing(const ValidationContext &context) {
    const Action &action = context.action();
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    bool gpu = context.gpu;
    size_t rank = facts.parallelSizes.size();
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    // A tile that does not divide its loop leaves a partial tile at the loop's end, which the masked path
    // covers (tile, fuse, vectorize with masks, the staged SIMT gemm's clamped loads and guarded stores); the
    // lowerings of the other actions need dividing tiles, and a fused row reduction is computed whole per tile.
    // Convolutions' reductions (their windows, where those are the only ones) are computed per output point: a
    // partial tile of outputs is a masked one like any other.
    std::string blocker = raggedTilesBlocker(schedule, facts);
    if (blocker.empty() && facts.reductionSize > 0 && !facts.reductionsAreWindows())
      blocker = "a fused row reduction";
    int tiled = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t size = action.sizes[d];
      if (size == 0)
        continue;
      ++tiled;
      int64_t extent = action.level == "block" ? facts.parallelSizes[d] : blockExtent(schedule, facts, d);
      std::string where =
          std::to_string(d) + " (" + std::to_string(extent) + (action.level == "thread" ? " in the block tile)" : ")");
      if (size > extent)
        problem(index, "shape",
                "tile(" + action.level + ") size " + std::to_string(size) + " is larger than loop " + where);
      else if (extent % size != 0 && !blocker.empty())
        problem(index, "shape",
                "tile(" + action.level + ") size " + std::to_string(size) + " does not divide loop " + where +
                    ", and partial tiles are masked only on the tile / fuse / vectorize path, the staged SIMT "
                    "gemm and the staged, pipelined tensor-core gemm, not with " +
                    blocker);
      else if (extent % size != 0 && action.level == "thread" && findSlot(schedule, "stage") &&
               !stageIsImplicitGemm(facts)) // (the implicit GEMM pads its grid)
        problem(index, "shape",
                "tile(thread) size " + std::to_string(size) + " does not divide loop " + where +
                    ": with stage the thread tile sizes the block's thread grid, which must cut the block tile "
                    "exactly (only the block tile may leave a partial tile)");
    }
    if (tiled == 0)
      problem(index, "shape", "tile(" + action.level + ") tiles no loop (all sizes are 0)");
    bool fused = findSlot(schedule, "fuse", "block") || findSlot(schedule, "fuse", "thread");
    for (int64_t d : facts.wholeDims)
      if (fused && static_cast<size_t>(d) < rank && action.sizes[d] != 0 && action.sizes[d] != facts.parallelSizes[d])
        problem(index, "unsupported",
                "tile(" + action.level + ") cuts loop " + std::to_string(d) +
                    ", along which the root reads a reduction's result whole (a row statistic): fused, every "
                    "tile would recompute the row into a buffer the tiles share; keep it 0 (whole)");
    if (gpu && tiled > 3)
      problem(index, "shape",
              "tile(" + action.level + ") tiles " + std::to_string(tiled) + " loops; a GPU grid or block has 3 dims");
  }

  static void checkThreadLimits(const ValidationContext &context) {
    const Action &action = context.action();
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    bool gpu = context.gpu;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    // The tile a single thread runs: the thread tile, or the block tile when there is none (one thread per
    // block).
    bool threadsTile = action.level == "thread" || (action.level == "block" && !findSlot(schedule, "tile", "thread"));
    bool fusedHere = findSlot(schedule, "fuse", action.level == "thread" ? "thread" : "block") != nullptr;
    // (stage on a convolution computes its implicit GEMM whole, in tiles of K through shared memory: its thread
    // tile keeps no rows.)
    bool stagedGemm = stageIsImplicitGemm(facts) && findSlot(schedule, "stage");
    if (threadsTile && gpu && facts.reductionSize > 0 && fusedHere && facts.rowIntermediates != 0 && !stagedGemm) {
      // A reduction fused into a thread's tile keeps whole rows of its intermediates in the thread's local
      // memory; CUDA allows 512 KB per thread (launches failed on the H200 at 1 MB, ran at 256 KB). Without
      // row-sized intermediates (a loss's sum of squared differences) nothing of a row is kept.
      std::vector<int64_t> innermost = innermostTile(schedule, facts);
      int64_t rows = 1;
      for (size_t d = 0; d < innermost.size(); ++d)
        if (!llvm::is_contained(facts.wholeDims, static_cast<int64_t>(d)))
          rows *= innermost[d];
      // With lanes a row is cut among its lanes: each keeps its slice of the row.
      int64_t perThread = facts.reductionSize;
      if (const Action *lanes = findSlot(schedule, "lanes"); lanes && lanes->value > 0)
        perThread = (perThread + lanes->value - 1) / lanes->value;
      int64_t bytes = rows * perThread * 4;
      if (bytes > kMaxLocalBytesPerThread)
        problem(index, "too-large",
                "tile(" + action.level + "): each thread would keep " + std::to_string(rows) + " rows of " +
                    std::to_string(facts.reductionSize) + " elements of the fused reduction's intermediates (" +
                    std::to_string(bytes >> 10) + " KB) in local memory; a GPU thread has at most 512 KB");
    }
    if (action.level == "thread") {
      std::vector<int64_t> dims = blockDims(schedule, facts);
      int64_t threads = dims[0] * dims[1] * dims[2];
      if (gpu && threads > 1024)
        problem(index, "too-large",
                "tile(thread) makes " + std::to_string(threads) + " threads per block; the GPU allows 1024");
      // A SIMT contraction keeps one accumulator per output point of its thread tile in registers; past 256
      // (a thread has 255 registers) they spill, and the unrolled tile makes compiles that ran out the
      // search's 30 s limit on the H200 (tile(thread, 0x8) of 128x128 blocks: 1024 per thread).
      std::vector<int64_t> perThread = innermostTile(schedule, facts);
      int64_t points = 1;
      for (int64_t extent : perThread)
        points *= extent;
      // (Contractions without a row reduction after them: a softmax's whole-row thread tiles are its own
      // matter, bounded by the local-memory check above.)
      if (gpu && !facts.contractionOp.empty() && facts.reductionSize == 0 && !findSlot(schedule, "mma") &&
          points > kMaxSimtAccumulators)
        problem(index, "too-large",
                "tile(thread): " + std::to_string(points) + " output points per thread, each an accumulator in " +
                    "registers; at most " + std::to_string(kMaxSimtAccumulators) + " (a thread has 255 registers)");
      // A convolution's staged implicit GEMM keeps one accumulator per output point of the thread tile's tiled
      // loops (a loop the thread tile leaves whole, size 0, runs serially around them).
      if (gpu && facts.windowOps > 0 && findSlot(schedule, "stage") && !findSlot(schedule, "mma")) {
        int64_t live = 1;
        for (int64_t size : action.sizes)
          live *= std::max<int64_t>(size, 1);
        if (live > kMaxStagedConvAccumulators)
          problem(index, "too-large",
                  "tile(thread): " + std::to_string(live) + " output points per thread of the staged convolution, " +
                      "each an accumulator in registers beside its operands' fragments; at most " +
                      std::to_string(kMaxStagedConvAccumulators) + " (more spill: a thread has 255 registers)");
      }
    }
    // One thread running a whole block's tile: a block of 1 thread keeps a multiprocessor at most 1/64 busy
    // (32 resident blocks of 1 thread against 2048 threads), and that thread runs the tile serially. On the
    // H200 the search's tile(block, 128x128) alone ran a 4096^3 gemm's launch in 15 s (the naive kernel:
    // 85 ms), costing a trial its whole run timeout; such schedules are rejected before compiling.
    if (gpu && action.level == "block" && !kernelSplit(schedule)) {
      std::vector<int64_t> dims = blockDims(schedule, facts);
      int64_t points = 1;
      for (size_t d = 0; d < facts.parallelSizes.size(); ++d)
        points *= blockExtent(schedule, facts, d);
      if (dims[0] * dims[1] * dims[2] == 1 && points > 1)
        problem(index, "too-slow",
                "tile(block) with one thread per block: each block's " + std::to_string(points) +
                    " points would run on a single thread; tile(thread) spreads them over the block's threads");
    }
  }
};

//===----------------------------------------------------------------------===//
// fuse
//===----------------------------------------------------------------------===//

class FuseAction : public ActionDefinition {
public:
  FuseAction()
      : ActionDefinition(
            ActionSpec{
                "fuse",
                "Fuse every producer of the root (fills, contractions, elementwise ops) into the block- or "
                "thread-level "
                "loop, so intermediate results stay on chip.",
                "transform.foreach_match (marks producers), transform.structured.fuse_into_containing_op (twice: a "
                "producer with several uses is fused once per pass)",
                {{"into", ParamType::Enum, {}, {"block", "thread"}, "the loop level to fuse into"}},
                {"gpu", "cpu"},
                "the level is tiled; thread needs fuse(block). On the GPU a payload with producers needs fuse(block) "
                "(else "
                "they would run on the host) and, with a thread tile, fuse(thread) (else every thread would run them)"},
            {{"block", 20}, {"thread", 40}}) {}

  void validate(const ValidationContext &context) const override {
    const Action &action = context.action();
    const PayloadFacts &facts = context.facts;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
    if (!before("tile", action.level))
      problem(index, "precondition", "fuse(" + action.level + ") needs tile(" + action.level + ") before it");
    if (action.level == "thread" && !before("fuse", "block"))
      problem(index, "precondition", "fuse(thread) needs fuse(block) before it");
    if (facts.linalgOps < 2)
      problem(index, "precondition", "fuse: the root has no producers to fuse");
    if (std::string several = severalKernelsReason(facts, context.gpu); !several.empty())
      problem(index, "unsupported", several);
  }

  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    const Action &action = schedule[index];
    if (stagedWarpTile(r, action, schedule, "need no loop"))
      return true;
    std::string loop = action.level == "block" ? r.blockLoop : r.threadLoop;
    // Block level: the marked producers of the whole function; thread level: those fused into the block.
    std::string scope = action.level == "block" ? r.func : r.blockLoop;
    std::string producers = r.fresh("producers"), fused = r.fresh("fused"), newLoop = r.fresh("loop");
    r.line("    " + producers + " = transform.structured.match attributes{" + r.producerAttr + "} in " + scope + " : " +
           r.kUnary);
    r.line("    " + fused + ", " + newLoop + " = transform.structured.fuse_into_containing_op " + producers + " into " +
           loop + " : " + r.kFusePair);
    // A producer used by two fused ops is fused for the first only (upstream fuses each handle entry once):
    // fuse what is still outside the loop and used in it, silently if there is none. Each such pass can leave
    // a producer of the producer behind (gemm+softmax: the matmul feeds max and exp, exp feeds sum and
    // divide), so there is one pass per level of the producer chain.
    int64_t passes = r.leftoverPasses ? std::clamp<int64_t>(r.facts.linalgOps - 1, 1, 6) : 0;
    for (int64_t pass = 0; pass < passes; ++pass) {
      std::string left = r.fresh("left");
      r.line("    " + left + " = transform.collect_matching @match_left_at_" + action.level + " in " + r.func + " : " +
             r.kUnary);
      r.line("    transform.sequence " + newLoop + " : !transform.any_op failures(suppress) {");
      r.line("    ^bb0(%containing: !transform.any_op):");
      r.line("      %more, %more_loop = transform.structured.fuse_into_containing_op " + left +
             " into %containing : " + r.kFusePair);
      r.line("    }");
    }
    (action.level == "block" ? r.blockLoop : r.threadLoop) = newLoop;
    r.inner = newLoop;
    return true;
  }
};

//===----------------------------------------------------------------------===//
// unroll, vectorize, recompute
//===----------------------------------------------------------------------===//

class UnrollAction : public ActionDefinition {
public:
  UnrollAction()
      : ActionDefinition(ActionSpec{"unroll",
                                    "Unroll the contraction's reduction loop.",
                                    "transform.loop.unroll",
                                    {{"factor", ParamType::Int, {2, 4, 8}, {}, "unroll factor"}},
                                    {"gpu", "cpu"},
                                    "tile(reduction)"},
                         {{"", 60}}) {}

  void validate(const ValidationContext &context) const override {
    if (!context.before("tile", "reduction"))
      context.problem("precondition", "unroll needs tile(reduction) before it (it unrolls that loop)");
  }

  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    const Action &action = schedule[index];
    r.line("    transform.loop.unroll " + r.kLoop + " {factor = " + std::to_string(action.value) +
           "} : !transform.any_op");
    return true;
  }
};

class VectorizeAction : public ActionDefinition {
public:
  VectorizeAction()
      : ActionDefinition(
            ActionSpec{
                "vectorize",
                "Vectorize every linalg op of the innermost tile (static shapes), then lower contractions to outer "
                "products and hoist loop-invariant transfers.",
                "transform.structured.vectorize, vector pattern sets, "
                "transform.structured.hoist_redundant_vector_transfers",
                {},
                {"gpu", "cpu"},
                "the innermost tile has at most 512 elements per op (on the GPU: a thread-level tile); no cf.assert "
                "in a body (an importer's bounds checks)"},
            {{"", 70}}) {}

  void validate(const ValidationContext &context) const override {
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    bool gpu = context.gpu;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    // MLIR 22 vectorizes 1-D convolutions only: a 2-D one fails to compile ("Attempted to vectorize, but
    // failed"), which scripts/gpu/precheck.py found the search proposing for conv2d_nhwc.
    if (StringRef(facts.rootOp).starts_with("linalg.conv_2d") ||
        StringRef(facts.rootOp).starts_with("linalg.conv_3d") ||
        StringRef(facts.rootOp).starts_with("linalg.depthwise_conv_2d"))
      problem(index, "unsupported",
              "vectorize: MLIR 22 vectorizes 1-D convolutions only, not the root " + facts.rootOp);
    // A convolution fused with its padding (kforge-normalize-importer) is a generic whose body gathers its
    // input per window element: vectorized, each thread tile's window would become one gather of hundreds of
    // lanes.
    if (facts.rootOp == "linalg.generic" && facts.reductionsAreWindows() &&
        facts.rootLoops > static_cast<int64_t>(facts.parallelSizes.size()))
      problem(index, "unsupported", "vectorize: the root is a convolution reading its input through a gather");
    if (facts.multiResultReductions > 0)
      problem(index, "unsupported",
              "vectorize: the payload has a reduction with several results (argmax / argmin: the extreme value "
              "and its index), which MLIR 22's vectorizer does not take (\"Attempted to vectorize, but failed\")");
    if (facts.indexChecks > 0)
      problem(index, "unsupported",
              "vectorize: the payload checks indices in a linalg body (cf.assert: an importer's bounds checks of a "
              "gather), which MLIR 22's vectorizer does not take (\"Attempted to vectorize, but failed\")");
    // A row that the lanes do not divide: each lane's slice has its own length, which the vectorizer (static
    // vector sizes) cannot take ("Attempted to vectorize, but failed").
    if (const Action *lanes = findSlot(schedule, "lanes");
        lanes && lanes->value > 0 && lanesRowWidth(schedule, facts) % lanes->value != 0)
      problem(index, "unsupported",
              "vectorize: the row (" + std::to_string(lanesRowWidth(schedule, facts)) + " elements) is not a multiple "
              "of lanes(" + std::to_string(lanes->value) + "), so the lanes' slices differ in length; vectorize "
              "needs static ones (without it each lane loops over its own columns)");
    // Partial tiles are vectorized under masks at the thread tile's sizes, one list for every op of the tile:
    // elementwise ops only (a contraction's or a reduction's loops differ from the root's parallel ones).
    if (raggedTiles(schedule, facts) && (!facts.contractionOp.empty() || facts.reductionOps > 0))
      problem(index, "unsupported",
              "vectorize: the tiles do not divide the loops, and masked vectorization of partial tiles takes "
              "elementwise payloads only (this one has a " +
                  std::string(facts.contractionOp.empty() ? "reduction" : "contraction") +
                  "); without vectorize each thread loops over its partial tile");
    // Elements of the innermost tile of the root (and of the contraction, with its K tile).
    const Action *thread = findSlot(schedule, "tile", "thread");
    if (gpu && !thread)
      problem(index, "precondition", "vectorize on the GPU needs tile(thread) (it vectorizes each thread's tile)");
    // The innermost tile's extents; a column of one element (last extent 1, another above 1) sends MLIR 22's
    // vector lowering into a loop that ends out of memory (seen on tiles like 16x1 and 2x1).
    std::vector<int64_t> innermost = innermostTile(schedule, facts);
    int64_t elements = 1;
    for (int64_t extent : innermost)
      elements *= extent;
    if (!facts.contractionOp.empty()) {
      const Action *k = findSlot(schedule, "tile", "reduction");
      elements *= k && !k->sizes.empty() ? k->sizes[0] : facts.contractionK;
    }
    // A reduction (not a contraction) fused into the tile is computed whole for each of the tile's rows.
    bool reductionsFused = facts.reductionSize > 0 && findSlot(schedule, "fuse", thread ? "thread" : "block");
    const Action *lanes = findSlot(schedule, "lanes");
    if (reductionsFused)
      elements = std::max(elements, elements / innermost.back() * facts.reductionSize /
                                        (lanes && lanes->value > 0 ? lanes->value : 1));
    if (innermost.size() > 1 && innermost.back() == 1 &&
        llvm::any_of(llvm::ArrayRef(innermost).drop_back(), [](int64_t e) { return e > 1; }))
      problem(index, "unsupported",
              "vectorize: the innermost tile (" + joinInts(innermost, "x") +
                  ") is a column of single elements, which MLIR 22's vector lowering does not finish on; "
                  "make its last tile size larger than 1");
    // Likewise a contraction whose innermost tile has a single row or column (vector.contract on unit dims).
    else if (!facts.contractionOp.empty() && innermost.size() >= 2 &&
             (innermost[innermost.size() - 1] == 1 || innermost[innermost.size() - 2] == 1))
      problem(index, "unsupported",
              "vectorize: the contraction's innermost tile (" + joinInts(innermost, "x") +
                  ") has a single row or column, which MLIR 22's vector lowering does not finish on; tile both "
                  "output dimensions by more than 1");
    if (elements > kMaxVectorElements)
      problem(index, "too-large",
              "vectorize: the innermost tile has " + std::to_string(elements) + " elements per op (at most " +
                  std::to_string(kMaxVectorElements) + "); tile smaller first");
  }

  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    // Unit dims first (a 1xN thread tile): vector patterns on vector<1xN> ops can rewrite each other forever
    // (seen as an out-of-memory abort). Then matched and r.vectorized before any cleanup pattern can replace
    // the loop the handle points to.
    // (A named batch_matmul keeps its unit batch dim; its generic form lets the dim be folded away.)
    r.renderFoldUnitDims(r.facts.contractionOp == "linalg.batch_matmul" ? "\"linalg.batch_matmul\"" : "", r.inner);
    std::string ops = r.fresh("tile_ops");
    r.line("    " + ops + " = transform.structured.match interface{LinalgOp} in " + r.inner + " : " + r.kUnary);
    // Partial tiles: the tile's ops have dynamic shapes, vectorized at the full tile's (static) sizes under
    // masks; the unit dims are folded away above, so they have none here. On a full tile the masks fold away.
    std::string sizes;
    if (raggedTiles(schedule, r.facts)) {
      // A ragged dimension keeps its dynamic size even where its tile is 1 (a thread's share of a partial block
      // is 0 or 1 elements): it is not folded with the unit dims, so it needs its vector size too.
      std::vector<int64_t> vectorSizes;
      for (auto [d, extent] : llvm::enumerate(innermostTile(schedule, r.facts)))
        if (extent != 1 || raggedAlong(schedule, r.facts, d))
          vectorSizes.push_back(extent);
      if (!vectorSizes.empty())
        sizes = " vector_sizes [" + joinInts(vectorSizes, ", ") + "]";
      r.masked = true;
    }
    r.line("    transform.structured.vectorize " + ops + sizes + " : !transform.any_op");
    std::string canon = r.fresh("func");
    r.line("    " + canon + " = " + r.matchFunc("%module"));
    r.line("    transform.apply_patterns to " + canon + " {");
    r.line("      transform.apply_patterns.vector.reduction_to_contract");
    r.line("      transform.apply_patterns.vector.transfer_permutation_patterns");
    r.line("      transform.apply_patterns.canonicalization");
    r.line("    } : !transform.any_op");
    r.line("    transform.apply_cse to " + canon + " : !transform.any_op");
    r.vectorized = true;
    return true;
  }
};

class RecomputeAction : public ActionDefinition {
public:
  RecomputeAction()
      : ActionDefinition(
            ActionSpec{
                "recompute",
                "Recompute each elementwise producer in every op that consumes it, inside the thread's loop, instead "
                "of "
                "keeping its result (softmax: exp(x - max) is computed again by the row sum and by the division). With "
                "lanes and without vectorize, a lane then keeps nothing of a wide row: each pass re-reads its columns "
                "(from L2 after the first) and few registers are needed, so many rows are in flight. With vectorize "
                "and a row the lanes' registers hold, LLVM merges the re-reads into the first: layernorm without "
                "affine "
                "8192 x 4096's best kernel in benchmark call 43 (recompute; lanes(256); lane_vector(4); vectorize) "
                "reads "
                "each row once, four 16-byte loads per lane, as without recompute (torch.compile's Triton kernel reads "
                "it twice, the second time from L1 and L2: call 42).",
                "transform.kforge.fuse_elementwise_producers on the thread-level scf.forall (upstream's elementwise "
                "fusion, repeated)",
                {},
                {"gpu"},
                "fuse(thread) (the producers are in the thread's loop)"},
            {{"", 41}}) {}

  void validate(const ValidationContext &context) const override {
    if (!context.before("fuse", "thread"))
      context.problem("precondition", "recompute needs fuse(thread) before it (it rewrites the producers fused into "
                                      "the thread's loop)");
  }

  bool render(Renderer &r, size_t, const Schedule &) const override {
    std::string recomputed = r.fresh("recomputed");
    r.line("    " + recomputed + " = transform.kforge.fuse_elementwise_producers " + r.threadLoop + " : " + r.kUnary);
    return true;
  }
};

//===----------------------------------------------------------------------===//
// reorder
//===----------------------------------------------------------------------===//

/// Loop interchange: the root's loops in its innermost tile run in another order. The order of a loop nest
/// decides which operand a thread's innermost loop walks contiguously (a matvec's row or column, a transposed
/// operand's rows) and which accumulator stays in a register; vectorized tiles are lowered whole, so reorder
/// acts on scalar code.
class ReorderAction : public ActionDefinition {
public:
  ReorderAction()
      : ActionDefinition(
            ActionSpec{"reorder",
                       "Interchange the root op's loops in its innermost tile: loop i of the tile's nest becomes loop "
                       "permutation[i] of the op (its parallel loops, then its reduction loops, as the op lists "
                       "them). The innermost loop decides which operand a thread walks contiguously and whether "
                       "an accumulator stays in a register across it (a matvec's reduction inside or outside, a "
                       "transposed operand read along its rows).",
                       "transform.annotate of the root at the start (kforge.root, kept by tiling); then "
                       "transform.structured.generalize and transform.structured.interchange "
                       "{iterator_interchange} on the marked op in the innermost tile",
                       {{"permutation",
                         ParamType::IntList,
                         {0, 1, 2, 3, 4, 5, 6, 7},
                         {},
                         "a permutation of 0 .. loops - 1, one entry per loop of the root (its parallel loops, "
                         "then its reduction loops)",
                         ","}},
                       {"gpu", "cpu"},
                       "the root's loop count known (kforge-compile's facts: root_loops); not the identity; not "
                       "with split, split_k, lanes, mma or stage (they rewrite the root themselves) nor with "
                       "vectorize (a vectorized tile is lowered whole, whatever its loops' order)"},
            {{"", 65}}) {}

  void checkParsed(const Action &action, int index, std::vector<Problem> &problems) const override {
    if (std::optional<std::string> why = notAPermutation(action.sizes, action.sizes.size()))
      problems.push_back({index, "out-of-domain", *why});
  }

  void validate(const ValidationContext &context) const override {
    const Action &action = context.action();
    int64_t loops = context.facts.rootLoops;
    if (loops <= 0) {
      context.problem("precondition", "reorder needs the root's loop count (facts from a kforge-compile that "
                                      "records root_loops)");
      return;
    }
    if (std::optional<std::string> why = notAPermutation(action.sizes, loops)) {
      context.problem("shape",
                      *why + " (the root " + context.facts.rootOp + " has " + std::to_string(loops) + " loops)");
      return;
    }
    std::vector<int64_t> identity(loops);
    std::iota(identity.begin(), identity.end(), 0);
    if (action.sizes == identity)
      context.problem("shape", "reorder: the identity permutation leaves the loops as they are");
    for (StringRef other : {"lanes", "mma", "stage", "vectorize"})
      if (findSlot(context.schedule, other))
        context.problem("unsupported", "reorder does not combine with " + other +
                                           (other == "vectorize" ? " (a vectorized tile is lowered whole)"
                                                                 : " (it rewrites the root itself)"));
  }

  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    std::string marked = r.fresh("reorder_target"), generic = r.fresh("reorder_generic");
    r.line("    " + marked + " = transform.structured.match attributes{kforge.root} in " + r.func + " : " +
           Renderer::kUnary);
    r.line("    " + generic + " = transform.structured.generalize " + marked + " : " + Renderer::kUnary);
    r.line("    " + r.fresh("reordered") + " = transform.structured.interchange " + generic +
           " iterator_interchange = [" + joinInts(schedule[index].sizes, ", ") +
           "] : (!transform.any_op) -> "
           "!transform.any_op");
    return true;
  }

  std::vector<int64_t> searchValues(const PayloadFacts &) const override { return {}; }

private:
  static std::optional<std::string> notAPermutation(llvm::ArrayRef<int64_t> permutation, size_t loops) {
    std::vector<int64_t> sorted(permutation.begin(), permutation.end());
    llvm::sort(sorted);
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != loops)
        return "reorder.permutation [" + joinInts(permutation, ", ") + "] is not a permutation of 0 .. " +
               std::to_string(static_cast<int64_t>(loops) - 1);
    if (sorted.empty())
      return std::string("reorder.permutation is empty");
    return std::nullopt;
  }
};

} // namespace

void kforge::tune::addTilingActions(ActionDefinitions &definitions) {
  definitions.push_back(std::make_unique<TileAction>());
  definitions.push_back(std::make_unique<FuseAction>());
  definitions.push_back(std::make_unique<UnrollAction>());
  definitions.push_back(std::make_unique<VectorizeAction>());
  definitions.push_back(std::make_unique<RecomputeAction>());
  definitions.push_back(std::make_unique<ReorderAction>());
}
