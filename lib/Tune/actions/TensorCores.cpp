//===- TensorCores.cpp - mma, stage, ldmatrix, pipeline, wgmma, stage_epilogue, tf32 ------===//
//
// The actions that rewrite a matmul whole after bufferization and the GPU mapping: tensor cores (mma.sync,
// Hopper's wgmma), operands staged through shared memory (also the fp32 SIMT SGEMM), fragments read by
// ldmatrix, stages filled by cp.async, the result stored through shared memory. mma renders the one
// transform.kforge.matmul_to_mma_sync op; the actions after it are its options (the TMA ones: TmaOptions.cpp).
//
//===----------------------------------------------------------------------===//

#include "../ActionDefinition.h"
#include "../Renderer.h"
#include "ImplicitGemm.h"
#include "MmaOptions.h"

#include "llvm/ADT/STLExtras.h"

using namespace kforge::tune;
using llvm::StringRef;

/// Whether the schedule multiplies f32 operands as TF32 (the tf32 option of the wgmma form).
static bool usesTf32(const Schedule &schedule) { return findSlot(schedule, "tf32") != nullptr; }

/// The tensor cores' operand elements per 16-byte copy (8 bf16/f16, 4 f32) and K per instruction (16, or 8 for
/// TF32).
static int64_t copyElements(const Schedule &schedule) { return usesTf32(schedule) ? 4 : 8; }
static int64_t instructionK(const Schedule &schedule) { return usesTf32(schedule) ? 8 : 16; }

/// K ends inside the last tile of the staged, pipelined forms: cp.async zero-fills the copies past it.
static bool zeroFilledK(const Schedule &schedule, const PayloadFacts &facts) {
  return findSlot(schedule, "stage") && findSlot(schedule, "pipeline") &&
         facts.contractionK % copyElements(schedule) == 0;
}

/// A batch_matmul's staged forms need stage and one batch per block.
template <typename Report>
static void checkBatchStaged(const Schedule &schedule, const PayloadFacts &facts, int index, StringRef kind,
                             Report problem) {
  if (!isBatchMatmul(facts))
    return;
  if (!findSlot(schedule, "stage"))
    problem(index, "unsupported", kind + " on a batch_matmul needs stage (its staged form takes one batch per block)");
  if (blockExtent(schedule, facts, 0) != 1)
    problem(index, "shape",
            kind + " on a batch_matmul needs one batch per block: tile(block, 1x...), not " +
                std::to_string(blockExtent(schedule, facts, 0)));
}

/// An action that rewrites the matmul whole (mma, stage) leaves nothing for the actions that schedule its loops.
template <typename Report>
static void checkNoSimtMatmulActions(const Schedule &schedule, int index, StringRef kind, StringRef kSteps,
                                     Report problem) {
  for (StringRef other : {"recompute", "lanes", "unroll", "vectorize"})
    if (findSlot(schedule, other))
      problem(index, "unsupported", kind + " computes the matmul itself: it does not combine with " + other);
  if (findSlot(schedule, "tile", "reduction"))
    problem(index, "unsupported", kind + " walks K itself, " + kSteps + ": it does not combine with tile(reduction)");
}

/// mma's preconditions: a bf16/f16 linalg.matmul, warp tiles of whole m16n8 instruction tiles, K of whole k16
/// steps, and none of the SIMT actions that would rewrite the matmul first.
template <typename Report>
static void checkMma(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  if (stageIsImplicitGemm(facts)) {
    checkImplicitGemmMma(schedule, facts, index, problem);
    return;
  }
  bool tf32 = usesTf32(schedule) && facts.contractionOperandType == "f32"; // the tf32 action checks the rest
  if ((facts.contractionOp != "linalg.matmul" && !isBatchMatmul(facts)) ||
      (facts.contractionOperandType != "bf16" && facts.contractionOperandType != "f16" && !tf32)) {
    problem(index, "unsupported",
            "mma needs a linalg.matmul (or batch_matmul) with bf16 or f16 operands (f32 ones only as TF32: the "
            "wgmma form with tf32, under --allow-tf32); this payload's contraction is " +
                (facts.contractionOp.empty() ? std::string("none")
                                             : facts.contractionOp + " on " + facts.contractionOperandType));
    return;
  }
  if (!facts.contractionResultType.empty() && facts.contractionResultType != "f32") {
    problem(index, "unsupported",
            "mma accumulates in f32; this contraction accumulates in its " + facts.contractionResultType +
                " result. Write it with an f32 result and truncate after (as torch-mlir does), or use the SIMT "
                "tiles");
    return;
  }
  // A as K x M: only wgmma reads it (M-major, transposed by the instruction); mma.sync's fragments are K-major.
  if (facts.contractionATransposed && !findSlot(schedule, "wgmma")) {
    problem(index, "unsupported",
            "mma.sync reads A as M x K (B as K x N or N x K); this matmul reads A as K x M: only wgmma takes it "
            "(mma, stage(64), pipeline, wgmma), or the SIMT tiles");
    return;
  }
  const Action *thread = findSlot(schedule, "tile", "thread");
  if (!thread) {
    problem(index, "precondition", "mma needs tile(thread) before it (its tile is a warp's)");
    return;
  }
  if (facts.linalgOps > 1 && !findSlot(schedule, "fuse", "thread"))
    problem(index, "precondition", "mma needs fuse(thread) before it (the matmul in the warp's loop)");
  checkBatchStaged(schedule, facts, index, "mma", problem);
  std::vector<int64_t> warpTile = matmulTile(innermostTile(schedule, facts), facts);
  if (warpTile[0] % 16 || warpTile[1] % 8 || warpTile[0] * warpTile[1] > 64 * 64)
    problem(index, "shape",
            "mma: the warp tile " + joinInts(warpTile, "x") +
                " must be a multiple of 16 rows and 8 columns (the m16n8k16 instruction), at most 64x64 "
                "(its accumulators live in registers)");
  const Action &mma = schedule[index];
  int64_t stepK = instructionK(schedule);
  if (mma.value > 0 && facts.contractionK % (stepK * mma.value) && !zeroFilledK(schedule, facts))
    problem(index, "shape",
            "mma(" + std::to_string(mma.value) + "): K (" + std::to_string(facts.contractionK) +
                ") must be a multiple of " + std::to_string(stepK) + " x k_steps");
  checkNoSimtMatmulActions(schedule, index, "mma", "in steps of 16", problem);
}

/// stage's preconditions without mma (those transform.kforge.matmul_to_simt_staged checks): an fp32
/// linalg.matmul, thread shares of whole groups of 4 rows and columns, whole 4-element copies, 227 KB of shared memory.
template <typename Report>
static void checkSimtStage(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  if (stageIsImplicitGemm(facts)) {
    checkImplicitGemmStage(schedule, facts, index, problem);
    return;
  }
  if (!((facts.contractionOp == "linalg.matmul" && facts.parallelSizes.size() == 2) || isBatchMatmul(facts)) ||
      facts.contractionOperandType != "f32") {
    problem(index, "unsupported",
            "stage without mma needs an fp32 linalg.matmul (with bf16/f16 operands: mma "
            "first); this payload's contraction is " +
                (facts.contractionOp.empty() ? std::string("none")
                                             : facts.contractionOp + " on " + facts.contractionOperandType));
    return;
  }
  const Action *thread = findSlot(schedule, "tile", "thread");
  if (!thread) {
    problem(index, "precondition", "stage needs tile(thread) before it (each thread's share of the block tile)");
    return;
  }
  checkNoSimtMatmulActions(schedule, index, "stage", "in tiles of block_k", problem);
  checkBatchStaged(schedule, facts, index, "stage", problem);
  int64_t blockK = schedule[index].value;
  std::vector<int64_t> share = matmulTile(innermostTile(schedule, facts), facts);
  size_t m = matmulRowDim(facts);
  int64_t rows = blockExtent(schedule, facts, m), cols = blockExtent(schedule, facts, m + 1);
  int64_t threads = blockDims(schedule, facts)[0];
  if (threads <= 0 || share[0] <= 0 || share[1] <= 0)
    return; // a thread tile larger than its block: tile(thread) reports it
  if (share[0] % 4 || share[1] % 4)
    problem(index, "shape",
            "stage: each thread's share " + joinInts(share, "x") + " must be whole groups of 4 rows and 4 columns");
  // A K that block_k does not divide: the last tile reads zeros past K (not with B's cp.async copies).
  if (blockK <= 0 || blockK % 4 || blockK > facts.contractionK)
    problem(index, "shape",
            "stage(" + std::to_string(blockK) + "): block_k must be a multiple of 4, at most K (" +
                std::to_string(facts.contractionK) + ")");
  else if (facts.contractionK % blockK && findSlot(schedule, "pipeline"))
    problem(index, "shape",
            "stage(" + std::to_string(blockK) + ") with pipeline: B's cp.async copies take whole tiles of K; K (" +
                std::to_string(facts.contractionK) + ") is not a multiple of block_k: drop pipeline");
  int64_t bytes = 2 * blockK * ((rows + 4) + cols) * 4;
  if (bytes > kMaxSharedBytesPerBlock)
    problem(index, "too-large",
            "stage(" + std::to_string(blockK) + "): two stages of A and B take " + std::to_string(bytes) +
                " bytes of shared memory; a block has at most " + std::to_string(kMaxSharedBytesPerBlock));
}

/// pipeline's preconditions (those of matmul_to_mma_sync's async_stages): a staged mma, and rows of A (K
/// long) and B (N long) that start on whole 16-byte copies. Its shared memory is checked with stage's.
template <typename Report>
static void checkPipeline(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  if (!findSlot(schedule, "stage")) {
    problem(index, "precondition", "pipeline needs stage before it (it fills the staged tiles)");
    return;
  }
  if (findSlot(schedule, "mma") && stageIsImplicitGemm(facts)) {
    // The tensor-core implicit GEMM: more stages, every copy a 16-byte cp.async.
    if (schedule[index].value < 3)
      problem(index, "shape",
              "pipeline(" + std::to_string(schedule[index].value) +
                  ") on a convolution's tensor-core implicit GEMM: it has two stages without pipeline; pipeline "
                  "takes 3 or more");
    else if (!facts.implicitGemmVectorCopies)
      problem(index, "unsupported",
              "pipeline on a convolution's tensor-core implicit GEMM fills its stages by 16-byte cp.async alone; "
              "this convolution's multiplicands are not both read 8 consecutive elements at a time (an NCHW "
              "input is not): drop pipeline");
    return;
  }
  if (!findSlot(schedule, "mma") && stageIsImplicitGemm(facts)) {
    // The implicit GEMM: pipeline(2) copies its tiles by cp.async, element by element (two stages).
    if (schedule[index].value != 2)
      problem(index, "shape",
              "pipeline(" + std::to_string(schedule[index].value) +
                  ") on the implicit GEMM (stage on a convolution): it has two stages (pipeline(2): its tiles by "
                  "cp.async)");
    else if (!facts.implicitGemmReads)
      problem(index, "unsupported",
              "pipeline(2) copies the implicit GEMM's elements as they are read; this convolution computes a "
              "multiplicand (not an element read or a padded one): drop pipeline");
    return;
  }
  if (!findSlot(schedule, "mma")) {
    // The fp32 staged SGEMM: two stages, B's tiles by cp.async (A's are stored transposed, through registers).
    if (schedule[index].value != 2)
      problem(index, "shape",
              "pipeline(" + std::to_string(schedule[index].value) +
                  ") on the fp32 staged SGEMM: it has two stages (pipeline(2): B's tiles by cp.async)");
    else if (facts.contractionBTransposed)
      problem(index, "unsupported",
              "pipeline(2) copies B's rows into shared memory as they are; this matmul reads B as N x K "
              "(nn.Linear's weight), transposed on its way in through registers: drop pipeline");
    return;
  }
  // The rows copied are A's (K long, or M long when A is K x M) and B's (N long, or K long when B is N x K:
  // nn.Linear's weight).
  int64_t n = facts.parallelSizes.empty() ? 0 : facts.parallelSizes.back();
  int64_t m = facts.parallelSizes.size() < 2 ? 0 : facts.parallelSizes[facts.parallelSizes.size() - 2];
  int64_t copy = copyElements(schedule);
  if (facts.contractionK % copy || (!facts.contractionBTransposed && n % copy) ||
      (facts.contractionATransposed && m % copy))
    problem(index, "shape",
            "pipeline copies 16 bytes at a time: K (" + std::to_string(facts.contractionK) + "), the columns (" +
                std::to_string(n) + ", unless B is N x K) and, when A is K x M, the rows (" + std::to_string(m) +
                ") must be multiples of " + std::to_string(copy));
}

/// wgmma's preconditions (those of matmul_to_mma_sync's wgmma option).
template <typename Report>
static void checkWgmma(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  const Action *stage = findSlot(schedule, "stage");
  if (stageIsImplicitGemm(facts)) { // (a convolution's: checkImplicitGemmMma checks wgmma with mma's rules)
    if (!findSlot(schedule, "mma") || !stage)
      problem(index, "precondition",
              "wgmma on a convolution needs mma and stage before it (it multiplies the staged "
              "tiles of its implicit GEMM)");
    return;
  }
  if (!findSlot(schedule, "mma") || !stage || !findSlot(schedule, "pipeline")) {
    problem(index, "precondition",
            "wgmma needs mma, stage and pipeline before it (it multiplies the pipelined stages)");
    return;
  }
  int64_t swizzleRow = usesTf32(schedule) ? 32 : 64;
  if (stage->value != swizzleRow)
    problem(index, "shape",
            "wgmma: stage(" + std::to_string(stage->value) + ") must be stage(" + std::to_string(swizzleRow) +
                ") (one 128-byte swizzled row of K per tile" + (usesTf32(schedule) ? ": 32 f32 with tf32)" : ")"));
  if (findSlot(schedule, "ldmatrix"))
    problem(index, "unsupported", "wgmma reads shared memory itself: it does not combine with ldmatrix");
  std::vector<int64_t> warpTile = matmulTile(innermostTile(schedule, facts), facts);
  size_t m = matmulRowDim(facts);
  int64_t rows = blockExtent(schedule, facts, m), cols = blockExtent(schedule, facts, m + 1);
  if (findSlot(schedule, "swap_ab")) { // (C^T = B^T A^T: warpgroups side by side, 64 columns each)
    if (warpTile[0] != rows || warpTile[1] != 16 || rows % 16 || rows > 256 || cols % 64 || cols > 256)
      problem(index, "shape",
              "wgmma with swap_ab: the warp tile " + joinInts(warpTile, "x") + " must be the block's " +
                  std::to_string(rows) + " rows by 16 columns, the block " + std::to_string(rows) + "x" +
                  std::to_string(cols) + " a multiple of 16 rows (at most 256) and of 64 columns (at most 256)");
    return;
  }
  if (warpTile[0] != 16 || warpTile[1] != cols || rows % 64 || cols % 64 || cols > 256)
    problem(index, "shape",
            "wgmma: the warp tile " + joinInts(warpTile, "x") + " must be 16 rows by the block's " +
                std::to_string(cols) + " columns, the block " + std::to_string(rows) + "x" + std::to_string(cols) +
                " a multiple of 64 rows and of 64 columns, at most 256");
}

/// stage's preconditions (those transform.kforge.matmul_to_mma_sync checks in its staged form).
template <typename Report>
static void checkStage(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  const Action *mma = findSlot(schedule, "mma");
  int64_t blockK = schedule[index].value;
  if (!mma) {
    checkSimtStage(schedule, facts, index, problem);
    return;
  }
  if (stageIsImplicitGemm(facts))
    return; // (mma on a convolution checks its stage: checkImplicitGemmMma)
  if (mma->value != 1)
    problem(index, "unsupported", "stage: a staged tile takes block_k / 16 steps of K per iteration; use mma(1)");
  int64_t stepK = instructionK(schedule), elementBytes = usesTf32(schedule) ? 4 : 2;
  if (blockK % stepK)
    problem(index, "shape",
            "stage(" + std::to_string(blockK) + ") with mma: block_k must be a multiple of " + std::to_string(stepK));
  std::vector<int64_t> dims = blockDims(schedule, facts);
  size_t m = matmulRowDim(facts);
  int64_t threads = dims[0], rows = blockExtent(schedule, facts, m), cols = blockExtent(schedule, facts, m + 1);
  if (threads <= 0)
    return; // a thread tile larger than its block: tile(thread) reports it
  // (The block's threads need not divide the tiles' 8-element vectors: the last round repeats the last one.)
  if (blockK <= 0 || (facts.contractionK % blockK && !zeroFilledK(schedule, facts)))
    problem(index, "shape",
            "stage(" + std::to_string(blockK) + "): K (" + std::to_string(facts.contractionK) +
                ") is not a multiple of block_k (with pipeline, K a multiple of 8 is enough)");
  else if (cols % 8)
    problem(index, "shape",
            "stage(" + std::to_string(blockK) + "): the block's " + std::to_string(cols) +
                " columns are not whole 8-element vectors");
  const Action *pipeline = findSlot(schedule, "pipeline");
  int64_t stages = pipeline && pipeline->value >= 2 ? pipeline->value : 2;
  // A (rows x block_k) and B (block_k x cols), rows padded by 8 elements, in each stage; wgmma's stages are
  // unpadded 128-byte swizzled rows (rows + cols of them), with TMA's mbarriers beside them (as
  // matmul_to_mma_sync lays them out: counting mma.sync's padding there refused 256 x 128 TF32 blocks over
  // 4 stages, which take 192 KB).
  int64_t bytes = findSlot(schedule, "wgmma")
                      ? stages * (rows + cols) * blockK * elementBytes + (findSlot(schedule, "tma") ? 1024 : 0)
                      : stages * (rows * (blockK + 8) + blockK * (cols + 8)) * elementBytes;
  if (bytes > kMaxSharedBytesPerBlock)
    problem(index, "too-large",
            "stage(" + std::to_string(blockK) + "): " + std::to_string(stages) + " stages of A and B take " +
                std::to_string(bytes) + " bytes of shared memory; a block has at most " +
                std::to_string(kMaxSharedBytesPerBlock));
}

namespace {

class MmaAction : public ActionDefinition {
public:
  MmaAction()
      : ActionDefinition(
            ActionSpec{
                "mma",
                "Compute the matmul on tensor cores: each thread-level tile becomes a warp's tile (tile(thread) maps "
                "to "
                "warps, 32 lanes each), computed by mma.sync m16n8k16 instructions (bf16 or f16 operands, f32 "
                "accumulators in registers over a loop on K, `k_steps` steps of 16 per iteration); the fused "
                "elementwise epilogue (bias, "
                "activation, rounding to bf16) is applied to the accumulators in registers and stored once. Operands "
                "are "
                "read from global memory (through L1), not staged in shared memory.",
                "tile(thread) mapped to #gpu.warp; after bufferization and the GPU mapping, "
                "transform.kforge.matmul_to_mma_sync {k_steps} on the warps' linalg.matmul (nvvm.mma.sync); on a "
                "convolution (payload facts' implicit_gemm_mma_type), with stage, its implicit GEMM: "
                "transform.kforge.implicit_gemm_to_mma_sync {block_k, warp_grid, serial_loops} on the block's "
                "convolution",
                {{"k_steps",
                  ParamType::Int,
                  {1, 2, 4},
                  {},
                  "steps of 16 along K per iteration of the K loop, all their fragments loaded before the first "
                  "multiply "
                  "(more loads in flight, more registers)"}},
                {"gpu"},
                "a linalg.matmul with bf16 or f16 operands (f32 accumulation), or a linalg.batch_matmul staged with "
                "one "
                "batch per block (tile(block, 1x...) and stage: the block's unit batch is folded away before "
                "bufferization); "
                "tile(thread) (and fuse(thread) when there are producers) whose tile is a multiple of 16 rows and 8 "
                "columns, at most 64x64; K a multiple of 16; no tile(reduction), unroll, vectorize, recompute or "
                "lanes. Or a bf16/f16 convolution accumulating in f32 (an importer's: the operands extended in the "
                "body), with stage (block_k a multiple of 16) and none of the matmul's staged options: each "
                "thread tile is a warp's share of the block's implicit GEMM, padded to whole 16x16 tiles, at most "
                "64x64"},
            {{"", 46}}) {}

  void validate(const ValidationContext &context) const override {
    checkMma(context.schedule, context.facts, static_cast<int>(context.index), ProblemSink{context});
  }

  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    if (stageIsImplicitGemm(r.facts)) {
      renderImplicitGemmMma(r, index, schedule);
      return true;
    }
    const Action &action = schedule[index];
    r.line("    // action " + std::to_string(index) + ": " + describe(action) +
           ": each warp's bufferized matmul tile to mma.sync, its epilogue in registers");
    std::string mmaFunc = r.fresh("mma_func"), matmuls = r.fresh("warp_matmuls");
    r.line("    " + mmaFunc + " = " + r.matchFunc("%bufferized"));
    r.line("    " + matmuls + " = transform.structured.match ops{[\"linalg.matmul\"]} in " + mmaFunc + " : " +
           Renderer::kUnary);
    std::string staging;
    if (const Action *stage = findSlot(schedule, "stage")) {
      std::vector<int64_t> warpTile = matmulTile(innermostTile(schedule, r.facts), r.facts);
      size_t m = matmulRowDim(r.facts);
      int64_t warpRows = blockExtent(schedule, r.facts, m) / warpTile[0],
              warpCols = blockExtent(schedule, r.facts, m + 1) / warpTile[1];
      staging = ", block_k = " + std::to_string(stage->value) + ", warp_grid = array<i64: " + std::to_string(warpRows) +
                ", " + std::to_string(warpCols) + ">";
      // The options the actions after stage add, in the canonical order.
      for (const Action &option : schedule)
        staging += definitionOf(option).mmaOptionIn(option, schedule, r.facts);
    }
    r.line("    transform.kforge.matmul_to_mma_sync " + matmuls + " {k_steps = " + std::to_string(action.value) +
           staging + "} : (!transform.any_op) -> ()");
    r.line("    transform.apply_cse to " + mmaFunc + " : !transform.any_op");
    return true;
  }
};

/// With mma, an option of its op (block_k, rendered by mma); without, the fp32 SIMT staged SGEMM.
class StageAction : public ActionDefinition {
public:
  StageAction()
      : ActionDefinition(
            ActionSpec{
                "stage",
                "Stage the matmul's operands through shared memory: tile(thread) then gives each thread's (with mma: "
                "each warp's) share of the block tile without a thread loop; the block's matmul walks K in tiles of "
                "`block_k`, all threads copying A's and B's tile into shared memory together (16-byte vectors, "
                "coalesced; rows padded against bank conflicts), two stages (the next tile is loaded into registers "
                "while "
                "the block multiplies this one), one barrier per tile. With mma, A and B are stored as they are and "
                "each "
                "warp reads its fragments from shared memory. Without (fp32, SIMT), A is stored transposed and each "
                "thread "
                "owns groups of 4 rows and 4 columns strided over the thread grid, read 4 at a time from shared "
                "memory, "
                "one FMA per output per step of K, the accumulators and the epilogue in registers.",
                "with mma: transform.kforge.matmul_to_mma_sync {block_k, warp_grid}; fp32: "
                "transform.kforge.matmul_to_simt_staged {block_k, thread_grid}; on the block's linalg.matmul after "
                "bufferization and the GPU mapping (a 1-D block; workgroup attributions, dynamic shared memory above "
                "48 KB); on a convolution (payload facts' implicit_gemm), its implicit GEMM: "
                "transform.kforge.implicit_gemm_to_simt_staged {block_k, thread_grid, serial_loops} on the block's "
                "convolution (marked kforge.implicit_gemm before tiling)",
                {{"block_k", ParamType::Int, {8, 16, 32, 64}, {}, "K of each staged tile (with mma a multiple of 16)"}},
                {"gpu"},
                "a linalg.matmul, or a linalg.batch_matmul with one batch per block (tile(block, 1x...)), or an "
                "fp32 convolution (its implicit GEMM: the loops only the input reads are its rows or columns, "
                "those only the filter reads the others, the window and channels its K; the thread tile's grid "
                "is padded to whole groups of 4 rows and columns, partial tiles masked; a loop the thread tile "
                "leaves whole is walked serially); with "
                "bf16/f16 "
                "operands mma(1) before it, fp32 without mma and without tile(reduction), "
                "unroll, vectorize; tile(thread); block_k divides K; the A (block rows x block_k) and B (block_k x "
                "block "
                "columns) tiles are whole 16-byte vectors per thread; fp32 thread tiles in groups of 4 rows and "
                "columns; "
                "two stages at most 227 KB of shared memory (above 48 KB dynamic)"},
            {{"", 47}}) {}

  void validate(const ValidationContext &context) const override {
    checkStage(context.schedule, context.facts, static_cast<int>(context.index), ProblemSink{context});
  }

  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    if (findSlot(schedule, "mma"))
      return false;
    const Action &action = schedule[index];
    if (stageIsImplicitGemm(r.facts)) {
      renderImplicitGemmStage(r, index, schedule);
      return true;
    }
    std::vector<int64_t> share = matmulTile(innermostTile(schedule, r.facts), r.facts);
    size_t m = matmulRowDim(r.facts);
    int64_t threadRows = blockExtent(schedule, r.facts, m) / share[0],
            threadCols = blockExtent(schedule, r.facts, m + 1) / share[1];
    r.line("    // action " + std::to_string(index) + ": " + describe(action) +
           ": the block's matmul through shared memory, each thread's share in registers");
    std::string stageFunc = r.fresh("stage_func"), matmuls = r.fresh("block_matmuls");
    r.line("    " + stageFunc + " = " + r.matchFunc("%bufferized"));
    r.line("    " + matmuls + " = transform.structured.match ops{[\"linalg.matmul\"]} in " + stageFunc + " : " +
           Renderer::kUnary);
    r.line("    transform.kforge.matmul_to_simt_staged " + matmuls + " {block_k = " + std::to_string(action.value) +
           ", thread_grid = array<i64: " + std::to_string(threadRows) + ", " + std::to_string(threadCols) + ">" +
           (findSlot(schedule, "pipeline") ? ", async_b" : "") + "} : (!transform.any_op) -> ()");
    r.line("    transform.apply_cse to " + stageFunc + " : !transform.any_op");
    return true;
  }
};

class LdmatrixAction : public MmaOptionAction {
public:
  LdmatrixAction()
      : MmaOptionAction(
            ActionSpec{
                "ldmatrix",
                "Read the staged mma fragments from shared memory with ldmatrix: four 8x8 matrices per instruction "
                "(one "
                "per 16 rows of A, one per 16 columns of B, per step of 16 along K) instead of one 32-bit load per "
                "register.",
                "the ldmatrix option of transform.kforge.matmul_to_mma_sync (nvgpu.ldmatrix, x4)",
                {},
                {"gpu"},
                "stage before it; the warp tile's columns a multiple of 16"},
            48) {}

  void validate(const ValidationContext &context) const override {
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
    if (!before("stage", ""))
      problem(index, "precondition", "ldmatrix needs stage before it (it reads the staged shared memory)");
    else if (innermostTile(schedule, facts)[1] % 16)
      problem(index, "shape",
              "ldmatrix reads B two 8-column tiles at a time: the warp tile's columns (" +
                  std::to_string(innermostTile(schedule, facts)[1]) + ") must be a multiple of 16");
  }
  std::string mmaOption(const Action &) const override { return ", ldmatrix"; }
};

class PipelineAction : public MmaOptionAction {
public:
  PipelineAction()
      : MmaOptionAction(
            ActionSpec{
                "pipeline",
                "Fill the staged mma tiles with asynchronous copies (cp.async, 16 bytes each, straight to shared "
                "memory "
                "without registers) through `stages` stages: stages - 1 tiles in flight while the block multiplies "
                "one, "
                "one barrier per tile.",
                "the async_stages option of transform.kforge.matmul_to_mma_sync (nvgpu.device_async_copy, "
                "device_async_create_group, device_async_wait)",
                {{"stages", ParamType::Int, {2, 3, 4}, {}, "shared-memory stages (tiles in flight: stages - 1)"}},
                {"gpu"},
                "stage before it. With mma: K and the matmul's columns multiples of 8 (rows of whole 16-byte copies), "
                "the "
                "stages at most 227 KB of shared memory. On the fp32 staged SGEMM (stage without mma) only "
                "pipeline(2): "
                "B's next tile goes by cp.async straight into its stage (the async_b option of "
                "transform.kforge.matmul_to_simt_staged), A's still through registers (it is stored transposed). "
                "On a convolution's implicit GEMM (stage on a convolution) only pipeline(2), where both sides are "
                "element reads (or padded ones): every element of both tiles by a 4-byte cp.async, zero-filled "
                "where the read is in the padding or past K (the async_copies option of "
                "transform.kforge.implicit_gemm_to_simt_staged). With mma on a convolution, pipeline(3) or (4): "
                "that many stages, where both multiplicands are read 8 consecutive elements at a time (payload "
                "facts' implicit_gemm_vector_copies: NHWC, not NCHW; the stages option of "
                "transform.kforge.implicit_gemm_to_mma_sync)"},
            49) {}

  void validate(const ValidationContext &context) const override {
    checkPipeline(context.schedule, context.facts, static_cast<int>(context.index), ProblemSink{context});
  }
  std::string mmaOption(const Action &action) const override {
    return ", async_stages = " + std::to_string(action.value);
  }
};

/// An option of the implicit GEMM's asynchronous copies (stage and pipeline(2) on a convolution), rendered by
/// stage in implicit_gemm_to_simt_staged's attributes.
class ContiguousCopiesAction : public ActionDefinition {
public:
  ContiguousCopiesAction()
      : ActionDefinition(
            ActionSpec{
                "contiguous_copies",
                "Share out the implicit GEMM's asynchronous copies one element a thread per copy, consecutive threads "
                "along each multiplicand's contiguous side (its rows or columns where it is contiguous along them, "
                "else K): a warp's 32 copies read consecutive addresses (a row of NCHW's input, a run of an FCHW "
                "filter) instead of 4 consecutive K positions a thread. `longest_k` 0: K's loops in the op's order "
                "(the contiguous K loop of a multiplicand copied along K innermost: the filter read in runs); 1: "
                "K's longest loop innermost (fewer divisions per element). Fewer memory transactions, more index "
                "arithmetic: which wins depends on the convolution.",
                "the copy_order option of transform.kforge.implicit_gemm_to_simt_staged (contiguous or "
                "contiguous_longest_k)",
                {{"longest_k", ParamType::Int, {0, 1}, {}, "1: K's longest loop innermost; 0: the op's order"}},
                {"gpu"},
                "stage on a convolution (its implicit GEMM) and pipeline(2) before it"},
            {{"", 56}}) {}

  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  void validate(const ValidationContext &context) const override {
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    if (!stageIsImplicitGemm(facts) || findSlot(schedule, "mma"))
      context.problem("unsupported", "contiguous_copies orders the copies of a convolution's implicit GEMM (stage "
                                     "on a convolution, payload facts' implicit_gemm); this schedule has none");
    else if (!findSlot(schedule, "stage") || !findSlot(schedule, "pipeline"))
      context.problem("precondition", "contiguous_copies needs stage and pipeline(2) before it (it orders the "
                                      "implicit GEMM's asynchronous copies)");
  }
};

class WgmmaAction : public MmaOptionAction {
public:
  WgmmaAction()
      : MmaOptionAction(
            ActionSpec{
                "wgmma",
                "Multiply the pipelined tiles with Hopper's warpgroup MMA (wgmma.mma_async m64nNk16, sm_90a) instead "
                "of "
                "mma.sync: the stages are 128-byte swizzled (A K-major, B N-major as in global memory, read transposed "
                "by "
                "the instruction through shared-memory descriptors); each warpgroup of 4 warps multiplies 64 rows by "
                "the "
                "block's columns, its accumulators in registers and the epilogue applied there. On a convolution's "
                "implicit GEMM (mma and stage(64) on a bf16/f16 convolution), the thread tile's warps become "
                "warpgroups, 64 rows each over the block's rows and the rest side by side over its columns, and the "
                "implicit GEMM's own copies (16-byte cp.async, or elements through registers) fill the swizzled "
                "stages.",
                "the wgmma option of transform.kforge.matmul_to_mma_sync, or on a convolution of "
                "transform.kforge.implicit_gemm_to_mma_sync (nvvm.wgmma.mma_async; the candidate is compiled for "
                "sm_90a)",
                {},
                {"gpu"},
                "mma, stage(64) and pipeline before it, no ldmatrix; tile(thread) of 16 rows and the block's columns "
                "(warps stacked: 64 rows per warpgroup); the block's columns a multiple of 64, at most 256. On a "
                "convolution: mma and stage(64) before it (pipeline optional, as mma's); whole warpgroups of 64 rows "
                "covering the block's rows, each warpgroup's columns (padded to 64) at most 256"},
            50) {}

  void validate(const ValidationContext &context) const override {
    checkWgmma(context.schedule, context.facts, static_cast<int>(context.index), ProblemSink{context});
  }
  std::string mmaOption(const Action &) const override { return ", wgmma"; }
};

class StageEpilogueAction : public MmaOptionAction {
public:
  StageEpilogueAction()
      : MmaOptionAction(
            ActionSpec{"stage_epilogue",
                       "Store the result through shared memory: after the K loop each lane writes its "
                       "(epilogue-applied) pairs "
                       "into a tile of the result over the stages' memory, then the block writes whole rows in 16-byte "
                       "vectors "
                       "(coalesced) instead of each lane's 4- or 8-byte pairs: for outputs large against the work (a "
                       "short K).",
                       "the stage_epilogue option of transform.kforge.matmul_to_mma_sync",
                       {},
                       {"gpu"},
                       "mma, stage and pipeline before it (stages in dynamic shared memory: more than 48 KB, or wgmma) "
                       "that hold "
                       "the result tile; a result of 16- or 32-bit elements, its columns whole 16-byte vectors"},
            54) {}

  void validate(const ValidationContext &context) const override {
    const Schedule &schedule = context.schedule;
    const PayloadFacts &facts = context.facts;
    const Action *stage = findSlot(schedule, "stage"), *pipeline = findSlot(schedule, "pipeline");
    if (!findSlot(schedule, "mma") || !stage || !pipeline) {
      context.problem("precondition",
                      "stage_epilogue needs mma, stage and pipeline before it (the result goes through the stages' "
                      "memory)");
      return;
    }
    // What matmul_to_mma_sync checks: the stages (as it lays them out) are dynamic shared memory (wgmma's, or
    // above 48 KB) and hold the result tile, rows padded by 16 bytes.
    size_t m = matmulRowDim(facts);
    int64_t rows = blockExtent(schedule, facts, m), cols = blockExtent(schedule, facts, m + 1);
    int64_t blockK = stage->value, stages = std::max<int64_t>(pipeline->value, 2);
    int64_t operandBytes = usesTf32(schedule) ? 4 : 2, kPad = usesTf32(schedule) ? 4 : 8;
    bool wgmma = findSlot(schedule, "wgmma") != nullptr;
    int64_t stageBytes = wgmma ? stages * (rows + cols) * 128
                               : stages * operandBytes *
                                     (rows * (blockK + kPad) +
                                      (facts.contractionBTransposed ? cols * (blockK + kPad) : blockK * (cols + 8)));
    int64_t resultBytes = facts.elementBytes(), tileBytes = rows * (cols + 16 / resultBytes) * resultBytes;
    if (rows <= 0 || cols <= 0)
      return;
    if (!wgmma && stageBytes <= 48 * 1024)
      context.problem("shape", "stage_epilogue: the " + std::to_string(stageBytes) +
                                   " bytes of stages are static shared memory (48 KB at most); it needs them dynamic");
    else if (tileBytes > stageBytes)
      context.problem("shape", "stage_epilogue: the " + std::to_string(rows) + "x" + std::to_string(cols) +
                                   " result tile (" + std::to_string(tileBytes) +
                                   " bytes with its padding) does not "
                                   "fit in the " +
                                   std::to_string(stageBytes) + " bytes of stages");
  }
  std::string mmaOption(const Action &) const override { return ", stage_epilogue"; }
};

class Tf32Action : public MmaOptionAction {
public:
  Tf32Action()
      : MmaOptionAction(
            ActionSpec{"tf32",
                       "Multiply the fp32 matmul on the tensor cores as TF32 (f32 accumulators): each operand keeps "
                       "its sign, exponent and top 10 mantissa bits, PyTorch's precision for an fp32 matmul when "
                       "torch.backends.cuda.matmul.allow_tf32 is set. With wgmma (Hopper): wgmma.mma_async m64nNk8 "
                       ".tf32 on stages of 32 f32 of K per 128-byte swizzled row (stage(32)). Without: mma.sync "
                       "m16n8k8 .tf32 on the pipelined stages, fragments read element by element or (ldmatrix) A's, "
                       "and B's when it is N x K, by ldmatrix (8 rows of 4 f32 per matrix). Only when the "
                       "tuning request allows TF32 (kforge-tune --allow-tf32); its kernels are verified against "
                       "TF32's tolerance. A convolution's implicit GEMM takes it on wgmma (the transform op's tf32 "
                       "option).",
                       "the tf32 option of transform.kforge.matmul_to_mma_sync (nvvm.wgmma.mma_async or "
                       "nvvm.mma.sync on tf32 operands)",
                       {},
                       {"gpu"},
                       "--allow-tf32; an f32 x f32 -> f32 linalg.matmul, K a multiple of 4; mma, stage and pipeline "
                       "before it; without wgmma (mma.sync), A as M x K; with wgmma, stage(32); with tma too, A as "
                       "M x K and B as N x K (nn.Linear's weight: TF32 wgmma reads both operands K-major; the cp.async "
                       "stages transpose an operand stored along M or N element by element, TMA cannot). On a "
                       "convolution's implicit GEMM: mma, stage(32) and "
                       "wgmma before it, both multiplicands contiguous along K (NHWC and FHWC, or channels_last)"},
            55) {}

  void validate(const ValidationContext &context) const override {
    const PayloadFacts &facts = context.facts;
    if (!facts.allowTf32) {
      context.problem("policy", "tf32 multiplies fp32 operands with 10-bit mantissas: it needs the request to allow "
                                "TF32 (kforge-tune --allow-tf32, as torch.backends.cuda.matmul.allow_tf32)");
      return;
    }
    const Schedule &schedule = context.schedule;
    if (stageIsImplicitGemm(facts)) {
      validateOnConvolution(context);
      return;
    }
    if (!findSlot(schedule, "mma") || !findSlot(schedule, "stage") || !findSlot(schedule, "pipeline")) {
      context.problem("precondition", "tf32 needs mma, stage and pipeline before it (it multiplies the pipelined "
                                      "stages, on wgmma or mma.sync)");
      return;
    }
    bool wgmma = findSlot(schedule, "wgmma") != nullptr;
    if (facts.contractionOperandType != "f32" ||
        (!facts.contractionResultType.empty() && facts.contractionResultType != "f32"))
      context.problem("unsupported", "tf32 multiplies f32 operands into an f32 result; this contraction is on " +
                                         facts.contractionOperandType);
    else if (wgmma && findSlot(schedule, "tma") && !findSlot(schedule, "swap_ab") &&
             (facts.contractionATransposed || !facts.contractionBTransposed))
      context.problem("unsupported",
                      "TF32 wgmma reads A and B K-major only, and TMA copies them as they lie: A as M x K and B as "
                      "N x K (nn.Linear's weight); this matmul reads " +
                          std::string(facts.contractionATransposed ? "A as K x M" : "B as K x N") +
                          ": add swap_ab (B through registers), drop tma (the cp.async stages transpose it, element "
                          "by element) or transpose_b");
  }
  std::string mmaOption(const Action &) const override { return ", tf32"; }

private:
  /// On a convolution's implicit GEMM: wgmma only (the mma.sync path is 16-bit), on f32 multiplicands both
  /// contiguous along K (TF32 wgmma reads both K-major).
  static void validateOnConvolution(const ValidationContext &context) {
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    if (!findSlot(schedule, "mma") || !findSlot(schedule, "stage") || !findSlot(schedule, "wgmma"))
      context.problem("precondition", "tf32 on a convolution needs mma, stage and wgmma before it (the implicit "
                                      "GEMM's TF32 form is wgmma's)");
    else if (facts.implicitGemmType != "f32")
      context.problem("unsupported",
                      "tf32 multiplies f32 multiplicands; this convolution's are " +
                          (facts.implicitGemmType.empty() ? std::string("mixed") : facts.implicitGemmType));
    else if (!facts.implicitGemmKMajor)
      context.problem("unsupported",
                      "TF32 wgmma reads both multiplicands K-major: each must be contiguous along a K loop (NHWC's "
                      "input and an FHWC filter; channels_last copies an NCHW input and FCHW filter so)");
  }
};

} // namespace

void kforge::tune::addTensorCoreActions(ActionDefinitions &definitions) {
  definitions.push_back(std::make_unique<MmaAction>());
  definitions.push_back(std::make_unique<StageAction>());
  definitions.push_back(std::make_unique<LdmatrixAction>());
  definitions.push_back(std::make_unique<PipelineAction>());
  definitions.push_back(std::make_unique<ContiguousCopiesAction>());
  definitions.push_back(std::make_unique<WgmmaAction>());
  addTmaOptionActions(definitions); // tma, warp_specialize, persistent, overlap: TmaOptions.cpp
  definitions.push_back(std::make_unique<StageEpilogueAction>());
  definitions.push_back(std::make_unique<Tf32Action>());
}
