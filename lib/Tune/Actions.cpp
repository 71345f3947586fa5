//===- Actions.cpp - the action registry, validator and renderer ----------===//

#include "kforge/Tune/Actions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace kforge::tune;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

/// Tile sizes a search may pick for a loop: 0 leaves the loop whole.
static const std::vector<int64_t> kTileSizes = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
static const std::vector<int64_t> kReductionSizes = {1, 2, 4, 8, 16, 32, 64};

/// The most elements one vectorized op of the innermost tile may have: beyond this the vector code is slow to
/// compile and spills (a thread of a GPU block, or one iteration of the CPU's innermost loop).
static constexpr int64_t kMaxVectorElements = 512;
static constexpr int64_t kMaxLocalBytesPerThread = 512 * 1024; ///< CUDA's local memory limit per thread.
/// Shared memory a block may have on sm_90 (above 48 KB it is dynamic: the staged ops and the runtime see to it).
static constexpr int64_t kMaxSharedBytesPerBlock = 227 * 1024;

llvm::ArrayRef<ActionSpec> kforge::tune::actionRegistry() {
  static const std::vector<ActionSpec> registry = {
      {"split",
       "Run the contraction as a kernel of its own and the row reductions after it (softmax, sigmoid + row sum) "
       "as a second kernel: one row per block over `lanes` lanes (the row in registers when it fits 128 values "
       "per lane), reduced over the block. The actions after split schedule the contraction: their tiles cut "
       "its parallel loops, fuse brings in its producers (its init's fill). Costs one write and one read of the "
       "contraction's result; saves each thread recomputing a row of the contraction.",
       "the lanes row schedule on the root (tile_using_forall, fuse_into_containing_op, "
       "transform.kforge.distribute_rows_to_lanes, vectorize), then the schedule on the contraction; each "
       "kernel's scf.forall mapped to a gpu.launch of its own",
       {{"lanes", ParamType::Int, {32, 64, 128, 256, 512, 1024}, {},
         "lanes per row of the second kernel (or any multiple of 32 up to 1024 that divides the row)"}},
       {"gpu"},
       "first; a contraction (linalg.matmul, linalg.batch_matmul) whose result feeds row reductions (a 2-D root or "
       "a row sum); lanes divides the row"},
      {"split_k",
       "Split a matmul's reduction (K) into `parts` slices computed by different blocks into a buffer of partial "
       "results, then sum the partials in a second kernel: more blocks when the output is small and K long. The "
       "actions after split_k schedule the partial matmul: its parallel loops are (parts, M, N), its K is K / "
       "parts.",
       "transform.structured.split_reduction (split dimension first), the actions on the partial matmul, and a "
       "fixed schedule on the sum of the partials (16 x 128 outputs per block, 4 per thread, vectorized); each "
       "kernel's scf.forall mapped to a gpu.launch of its own",
       {{"parts", ParamType::Int, {2, 4, 8, 16}, {}, "how many slices K is split into"}},
       {"gpu", "cpu"},
       "first; the root is a plain matmul (linalg.matmul and its fill, nothing after it); parts divides K"},
      {"tile",
       "Tile the root op's parallel loops into a block- or thread-level scf.forall, or a contraction's reduction "
       "loop into an scf.for.",
       "transform.structured.tile_using_forall (block, thread: mapped to #gpu.block / #gpu.thread on the GPU), "
       "transform.structured.tile_using_for (reduction)",
       {{"level", ParamType::Enum, {}, {"block", "thread", "reduction"}, "which loop level"},
        {"sizes", ParamType::IntList, kTileSizes, {},
         "block/thread: one size per parallel loop of the root (0: whole loop); thread sizes divide the block "
         "sizes; a block size may also be any divisor of a loop that is not a multiple of 32 (irregular shapes). "
         "reduction: one size for the contraction's K loop, from 1, 2, 4, 8, 16, 32, 64"}},
       {"gpu", "cpu"},
       "sizes divide the loop sizes; thread needs block; reduction needs a contraction (linalg.matmul or "
       "linalg.batch_matmul) in the payload; on the GPU at most 3 tiled loops per level and 1024 threads per block"},
      {"fuse",
       "Fuse every producer of the root (fills, contractions, elementwise ops) into the block- or thread-level "
       "loop, so intermediate results stay on chip.",
       "transform.foreach_match (marks producers), transform.structured.fuse_into_containing_op (twice: a "
       "producer with several uses is fused once per pass)",
       {{"into", ParamType::Enum, {}, {"block", "thread"}, "the loop level to fuse into"}},
       {"gpu", "cpu"},
       "the level is tiled; thread needs fuse(block). On the GPU a payload with producers needs fuse(block) (else "
       "they would run on the host) and, with a thread tile, fuse(thread) (else every thread would run them)"},
      {"unroll",
       "Unroll the contraction's reduction loop.",
       "transform.loop.unroll",
       {{"factor", ParamType::Int, {2, 4, 8}, {}, "unroll factor"}},
       {"gpu", "cpu"},
       "tile(reduction)"},
      {"vectorize",
       "Vectorize every linalg op of the innermost tile (static shapes), then lower contractions to outer "
       "products and hoist loop-invariant transfers.",
       "transform.structured.vectorize, vector pattern sets, transform.structured.hoist_redundant_vector_transfers",
       {},
       {"gpu", "cpu"},
       "the innermost tile has at most 512 elements per op (on the GPU: a thread-level tile)"},
      {"recompute",
       "Recompute each elementwise producer in every op that consumes it, inside the thread's loop, instead of "
       "keeping its result (softmax: exp(x - max) is computed again by the row sum and by the division). With "
       "lanes and without vectorize, a lane then keeps nothing of a wide row: each pass re-reads its columns "
       "(from L2 after the first) and few registers are needed, so many rows are in flight. With vectorize "
       "and a row the lanes' registers hold, LLVM merges the re-reads into the first: layernorm without affine "
       "8192 x 4096's best kernel in benchmark call 43 (recompute; lanes(256); lane_vector(4); vectorize) reads "
       "each row once, four 16-byte loads per lane, as without recompute (torch.compile's Triton kernel reads "
       "it twice, the second time from L1 and L2: call 42).",
       "transform.kforge.fuse_elementwise_producers on the thread-level scf.forall (upstream's elementwise "
       "fusion, repeated)",
       {},
       {"gpu"},
       "fuse(thread) (the producers are in the thread's loop)"},
      {"lanes",
       "Spread each thread's row over `count` lanes of a warp: lane l takes columns l, l + count, ... (one "
       "warp-wide access reads consecutive elements), and every reduction over the row becomes a partial per lane "
       "combined by warp shuffles (gpu.subgroup_reduce), whose result every lane holds; beyond 32 lanes a row spans "
       "several warps of a one-row block, and its reductions combine over the block (gpu.all_reduce: shuffles, "
       "then shared memory). Followed by vectorize, a "
       "lane reads its slice of the row once into registers and every phase of the row works on them "
       "(kforge-unroll-strided-transfers keeps the vector out of local memory).",
       "transform.kforge.distribute_rows_to_lanes on the thread-level scf.forall",
       {{"count", ParamType::Int, {8, 16, 32, 64, 128, 256, 512, 1024}, {},
         "lanes per row (32: a warp per row; more: several warps per row, one row per block; besides these, any "
         "multiple of 32 up to 1024 that divides the row, e.g. 800 for a 32000-wide row)"}},
       {"gpu"},
       "a 2-D root, or a row sum, without a contraction; tile(thread) of one row per thread (size 1 on the rows, the row "
       "whole) and fuse(thread) when there are producers; the row a multiple of count; at most 1024 threads; more "
       "than 32 lanes: tile(block) of one row"},
      {"lane_vector",
       "Give each lane `width` consecutive columns out of every width x count instead of one out of every count "
       "(lane l: columns l*width + j + k*width*count, j < width): a lane's accesses become width-element vectors "
       "(16 bytes with 4 fp32), so a row moves in width times fewer load and store instructions, a warp-wide "
       "access still reading consecutive memory; each reduction first combines the lane's width partials.",
       "the vector option of transform.kforge.distribute_rows_to_lanes (the backend merges the lane's adjacent "
       "accesses into vector loads and stores)",
       {{"width", ParamType::Int, {2, 4}, {}, "consecutive columns per lane (4 fp32 elements: 16 bytes)"}},
       {"gpu"},
       "lanes before it; the row a multiple of width x the lanes' count"},
      {"moments",
       "Combine a row's sum and its centred sum of squares (a layernorm's mean and variance: sum(x), then "
       "sum((x - sum / N)^2)) over the lanes in one round instead of two dependent ones: each lane sums its "
       "columns and their squared deviations from its own mean, and the lanes merge the pairs by Chan et al.'s "
       "pairwise update (shuffles; beyond a warp, one barrier and two shared values per warp). Half the "
       "dependent shuffles and barriers of the row's reductions; the variance is as accurate as the two-pass one.",
       "the moments option of transform.kforge.distribute_rows_to_lanes",
       {},
       {"gpu"},
       "lanes before it; the payload's row program has a row sum whose centred values are squared and summed; "
       "beyond 32 lanes, a power of 2 of warps"},
      {"mma",
       "Compute the matmul on tensor cores: each thread-level tile becomes a warp's tile (tile(thread) maps to "
       "warps, 32 lanes each), computed by mma.sync m16n8k16 instructions (bf16 or f16 operands, f32 "
       "accumulators in registers over a loop on K, `k_steps` steps of 16 per iteration); the fused elementwise epilogue (bias, "
       "activation, rounding to bf16) is applied to the accumulators in registers and stored once. Operands are "
       "read from global memory (through L1), not staged in shared memory.",
       "tile(thread) mapped to #gpu.warp; after bufferization and the GPU mapping, "
       "transform.kforge.matmul_to_mma_sync {k_steps} on the warps' linalg.matmul (nvvm.mma.sync)",
       {{"k_steps", ParamType::Int, {1, 2, 4}, {},
         "steps of 16 along K per iteration of the K loop, all their fragments loaded before the first multiply "
         "(more loads in flight, more registers)"}},
       {"gpu"},
       "a linalg.matmul with bf16 or f16 operands (f32 accumulation), or a linalg.batch_matmul staged with one "
       "batch per block (tile(block, 1x...) and stage: the block's unit batch is folded away before bufferization); "
       "tile(thread) (and fuse(thread) when there are producers) whose tile is a multiple of 16 rows and 8 "
       "columns, at most 64x64; K a multiple of 16; no tile(reduction), unroll, vectorize, recompute or lanes"},
      {"stage",
       "Stage the matmul's operands through shared memory: tile(thread) then gives each thread's (with mma: "
       "each warp's) share of the block tile without a thread loop; the block's matmul walks K in tiles of "
       "`block_k`, all threads copying A's and B's tile into shared memory together (16-byte vectors, "
       "coalesced; rows padded against bank conflicts), two stages (the next tile is loaded into registers while "
       "the block multiplies this one), one barrier per tile. With mma, A and B are stored as they are and each "
       "warp reads its fragments from shared memory. Without (fp32, SIMT), A is stored transposed and each thread "
       "owns groups of 4 rows and 4 columns strided over the thread grid, read 4 at a time from shared memory, "
       "one FMA per output per step of K, the accumulators and the epilogue in registers.",
       "with mma: transform.kforge.matmul_to_mma_sync {block_k, warp_grid}; fp32: "
       "transform.kforge.matmul_to_simt_staged {block_k, thread_grid}; on the block's linalg.matmul after "
       "bufferization and the GPU mapping (a 1-D block; workgroup attributions, dynamic shared memory above 48 KB)",
       {{"block_k", ParamType::Int, {8, 16, 32, 64}, {}, "K of each staged tile (with mma a multiple of 16)"}},
       {"gpu"},
       "a linalg.matmul, or a linalg.batch_matmul with one batch per block (tile(block, 1x...)); with bf16/f16 "
       "operands mma(1) before it, fp32 without mma and without tile(reduction), "
       "unroll, vectorize; tile(thread); block_k divides K; the A (block rows x block_k) and B (block_k x block "
       "columns) tiles are whole 16-byte vectors per thread; fp32 thread tiles in groups of 4 rows and columns; "
       "two stages at most 227 KB of shared memory (above 48 KB dynamic)"},
      {"ldmatrix",
       "Read the staged mma fragments from shared memory with ldmatrix: four 8x8 matrices per instruction (one "
       "per 16 rows of A, one per 16 columns of B, per step of 16 along K) instead of one 32-bit load per "
       "register.",
       "the ldmatrix option of transform.kforge.matmul_to_mma_sync (nvgpu.ldmatrix, x4)",
       {},
       {"gpu"},
       "stage before it; the warp tile's columns a multiple of 16"},
      {"pipeline",
       "Fill the staged mma tiles with asynchronous copies (cp.async, 16 bytes each, straight to shared memory "
       "without registers) through `stages` stages: stages - 1 tiles in flight while the block multiplies one, "
       "one barrier per tile.",
       "the async_stages option of transform.kforge.matmul_to_mma_sync (nvgpu.device_async_copy, "
       "device_async_create_group, device_async_wait)",
       {{"stages", ParamType::Int, {2, 3, 4}, {}, "shared-memory stages (tiles in flight: stages - 1)"}},
       {"gpu"},
       "stage before it. With mma: K and the matmul's columns multiples of 8 (rows of whole 16-byte copies), the "
       "stages at most 227 KB of shared memory. On the fp32 staged SGEMM (stage without mma) only pipeline(2): "
       "B's next tile goes by cp.async straight into its stage (the async_b option of "
       "transform.kforge.matmul_to_simt_staged), A's still through registers (it is stored transposed)"},
      {"wgmma",
       "Multiply the pipelined tiles with Hopper's warpgroup MMA (wgmma.mma_async m64nNk16, sm_90a) instead of "
       "mma.sync: the stages are 128-byte swizzled (A K-major, B N-major as in global memory, read transposed by "
       "the instruction through shared-memory descriptors); each warpgroup of 4 warps multiplies 64 rows by the "
       "block's columns, its accumulators in registers and the epilogue applied there. Not yet run on a GPU.",
       "the wgmma option of transform.kforge.matmul_to_mma_sync (nvvm.wgmma.mma_async; the candidate is "
       "compiled for sm_90a)",
       {},
       {"gpu"},
       "mma, stage(64) and pipeline before it, no ldmatrix; tile(thread) of 16 rows and the block's columns "
       "(warps stacked: 64 rows per warpgroup); the block's columns a multiple of 64, at most 256"},
      {"tma",
       "Fill wgmma's stages with Hopper's tensor memory accelerator instead of cp.async: the host builds a tensor "
       "map of A and of B before the launch (kforge's runtime, cuTensorMapEncodeTiled, 128-byte swizzled); in the "
       "kernel one thread issues a bulk tensor copy per box (cp.async.bulk.tensor) completing on the stage's "
       "mbarrier, which the block waits on.",
       "the tma option of transform.kforge.matmul_to_mma_sync (nvvm.cp.async.bulk.tensor, nvvm.mbarrier.*; a "
       "call to the runtime's kforge_tensor_map_2d before the launch)",
       {},
       {"gpu"},
       "wgmma before it; A and B function arguments or buffers of the host code with rows a multiple of 16 bytes"},
      {"overlap",
       "Keep one tile's wgmma in flight: each tile's warpgroup MMAs are waited for one tile later (wgmma.wait_group "
       "1), so they overlap the wait for the next tile and the issue of its MMAs; the copies then run stages - 2 "
       "tiles ahead.",
       "the wgmma_in_flight = 1 option of transform.kforge.matmul_to_mma_sync",
       {},
       {"gpu"},
       "wgmma and pipeline(3) or more before it"},
      {"stage_epilogue",
       "Store the result through shared memory: after the K loop each lane writes its (epilogue-applied) pairs "
       "into a tile of the result over the stages' memory, then the block writes whole rows in 16-byte vectors "
       "(coalesced) instead of each lane's 4- or 8-byte pairs: for outputs large against the work (a short K).",
       "the stage_epilogue option of transform.kforge.matmul_to_mma_sync",
       {},
       {"gpu"},
       "mma, stage and pipeline before it (stages in dynamic shared memory: more than 48 KB, or wgmma) that hold "
       "the result tile; a result of 16- or 32-bit elements, its columns whole 16-byte vectors"},
      {"prefetch_rows",
       "At its start, each block of a row kernel asks L2 for the row the block `ahead` rows later will read (one "
       "bulk prefetch per input row, by one thread; sm_90 and later): with `ahead` a wave of resident blocks, the "
       "next wave's rows stream from DRAM while this wave reduces and normalises its rows, and its loads then hit "
       "L2 (a row kernel with one block per multiprocessor otherwise leaves DRAM idle between its loads).",
       "transform.kforge.prefetch_rows_to_l2 on the gpu.launch (cp.async.bulk.prefetch.L2.global)",
       {{"ahead", ParamType::Int, {132, 264, 528, 1056}, {},
         "rows ahead: the blocks resident at once (132: one per H200 multiprocessor) or a multiple; besides these, "
         "any count from 1 to 65536"}},
       {"gpu"},
       "lanes with one row per block (tile(block) of one row); rows of whole 16-byte multiples"},
      {"pipeline_rows",
       "Make a row kernel's blocks loop over rows, `blocks` blocks in all: each copies its next row into shared "
       "memory (one bulk copy by the TMA unit, on an mbarrier) while it reduces, normalises and writes the "
       "current one, read from the previous copy. With `blocks` the blocks resident at once, DRAM keeps reading "
       "while every block computes (a kernel of one block per multiprocessor otherwise leaves it idle then).",
       "transform.kforge.pipeline_rows on the gpu.launch (cp.async.bulk.shared::cluster.global, mbarrier)",
       {{"blocks", ParamType::Int, {132, 264, 396, 528, 660, 792, 924, 1056}, {},
         "blocks in the grid: those resident at once (1 to 8 per H200 multiprocessor; more wait for a free "
         "one); besides these, any count from 1 to 65536"}},
       {"gpu"},
       "lanes of whole warps (a block reducing its row) and vectorize before it; not with prefetch_rows, stash or "
       "moments; a row that fits in shared memory"},
      {"stash",
       "Keep the last `quarters` / 4 of each lane's row values in shared memory instead of registers while the "
       "block reduces its row (stored after they are computed, loaded back where they are next used): fewer "
       "registers per thread, so with a register cap (occupancy(2)) two blocks of a wide row fit on a "
       "multiprocessor, one loading while the other reduces. Measured slower on softmax 1024 x 32000 (the "
       "4-byte copies, and spills at the cap): not proposed by the heuristic.",
       "transform.kforge.stash_rows_in_shared on the gpu.launch",
       {{"quarters", ParamType::Int, {1, 2, 3}, {}, "quarters of each lane vector's elements kept in shared memory"}},
       {"gpu"},
       "lanes of whole warps (a block-wide row) and vectorize before it (the lanes' row values are vectors)"},
      {"occupancy",
       "Ask the kernel's compiler to fit this many blocks on a multiprocessor (PTX .minnctapersm): ptxas limits "
       "each thread's registers to make room, trading spills for occupancy.",
       "transform.kforge.set_kernel_attributes {min_blocks_per_sm} on the gpu.launch, carried to the outlined "
       "kernel as nvvm.minctasm",
       {{"min_blocks_per_sm", ParamType::Int, {1, 2, 3, 4}, {}, "blocks per multiprocessor"}},
       {"gpu"},
       "tile(block) (the grid it maps to is the kernel it bounds)"},
      {"max_registers",
       "Cap the registers per thread of the kernel (PTX .maxnreg).",
       "transform.kforge.set_kernel_attributes {max_registers} on the gpu.launch, carried to the outlined kernel "
       "as nvvm.maxnreg",
       {{"count", ParamType::Int, {32, 64, 96, 128, 168, 255}, {}, "registers per thread"}},
       {"gpu"},
       "tile(block)"},
      {"streaming_stores",
       "Give every global store of the kernel the evict-first cache operator (.cs): output written once and "
       "never read back leaves L2 first, which keeps room for the lines still to be read. Measured on the H200 "
       "with the stores of call 23's best row kernels written as st.global.cs in cache_hints.py's harness (calls "
       "25-26): 1.6-5% faster on 4096-wide layernorm and RMS norm; by the tuner (call 27) under 0.5%.",
       "transform.kforge.set_kernel_attributes {streaming_stores} on the gpu.launch; the outlined kernel's "
       "module is assembled by ptxas with -dscm=cs (kforge-streaming-stores)",
       {},
       {"gpu"},
       "tile(block)"},
      {"read_only_inputs",
       "Load the buffers the kernel only reads through the non-coherent read-only path (ld.global.nc), whose "
       "cache keeps what many blocks read again (a layernorm's gamma and beta). Measured on the H200 with the "
       "loads of call 23's best row kernels written as ld.global.nc in cache_hints.py's harness (calls 25-26): "
       "layernorm 2.5-3% faster alone, about 1% on top of streaming_stores; by the tuner (call 27) within 0.5%. "
       "A buffer whose address "
       "is also used otherwise (a bulk copy or prefetch of it) keeps plain loads.",
       "transform.kforge.set_kernel_attributes {read_only_inputs} on the gpu.launch; in the outlined kernel "
       "the loads from arguments it only loads from are marked invariant (kforge-invariant-input-loads)",
       {},
       {"gpu"},
       "tile(block)"},
      {"loads_evict_last",
       "Load from the kernel's buffers with the L2 cache policy evict_last (createpolicy.fractional + "
       "ld.global.L2::cache_hint, as torch.compile's Triton kernels load; a bulk copy into shared memory, "
       "pipeline_rows', with the policy as its L2 cache hint; not an L2 prefetch): L2 evicts the lines it loads "
       "last. "
       "Measured on the H200 by the tuner (benchmark call 30): with prefetch_rows(264) the best form on 4096-wide "
       "layernorm, layernorm without affine and RMS norm, 1.4-2.1% faster than the best without it; its gain "
       "shrinks as the prefetch reaches further (2.5-3% without prefetch, -1% to 0.9% with a wave's, 660 rows). "
       "With pipeline_rows on softmax 1024 x 32000 (call 35): the best form, 1-4% faster than without it "
       "(0.0749 ms), where evict_first was slower. The tuner's L2 flush leaves L2 dirty; with a clean L2 "
       "(bench/run --l2 clean, call 40) call 37's norm kernels (prefetch_rows(264) with it) were still 0.5-2.6% "
       "faster than call 27's (prefetch_rows(660) without it).",
       "transform.kforge.set_kernel_attributes {load_l2_policy = \"evict_last\"} on the gpu.launch; in the "
       "outlined kernel the loads from its arguments become inline PTX with the policy (kforge-l2-load-policy, "
       "kforge-gpu-module-to-binary)",
       {},
       {"gpu"},
       "tile(block); not with loads_evict_first"},
      {"loads_evict_first",
       "Load from the kernel's buffers with the L2 cache policy evict_first (createpolicy.fractional + "
       "ld.global.L2::cache_hint; a bulk copy into shared memory, pipeline_rows', with the policy as its L2 cache "
       "hint; not an L2 prefetch): data read once leaves L2 first. Measured on the H200 by the tuner "
       "(benchmark call 29): 6% faster on an 8192 x 8192 row sum over 1024 lanes (0.0661 against 0.0705 ms), "
       "the search's best; slower on the norms and softmax (e.g. softmax 0.0375 against 0.0363 ms), and on "
       "pipeline_rows' bulk copies of softmax 1024 x 32000 (call 35: 0.0790 against 0.0779 without a policy).",
       "transform.kforge.set_kernel_attributes {load_l2_policy = \"evict_first\"} on the gpu.launch; in the "
       "outlined kernel the loads from its arguments become inline PTX with the policy (kforge-l2-load-policy, "
       "kforge-gpu-module-to-binary)",
       {},
       {"gpu"},
       "tile(block); not with loads_evict_last"},
  };
  return registry;
}

const ActionSpec *kforge::tune::findAction(StringRef kind) {
  for (const ActionSpec &spec : actionRegistry())
    if (spec.kind == kind)
      return &spec;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

llvm::json::Value kforge::tune::toJSON(const Problem &problem) {
  llvm::json::Object object{{"code", problem.code}, {"message", problem.message}};
  object["action"] = problem.action >= 0 ? llvm::json::Value(problem.action) : llvm::json::Value(nullptr);
  return object;
}

static llvm::json::Array intArray(llvm::ArrayRef<int64_t> values) {
  llvm::json::Array array;
  for (int64_t v : values)
    array.push_back(v);
  return array;
}

llvm::json::Value kforge::tune::toJSON(const Action &action) {
  llvm::json::Object params;
  if (action.kind == "tile") {
    params["level"] = action.level;
    params["sizes"] = intArray(action.sizes);
  } else if (action.kind == "fuse") {
    params["into"] = action.level;
  } else if (const ActionSpec *spec = findAction(action.kind);
             spec && spec->params.size() == 1 && spec->params[0].type == ParamType::Int) {
    params[spec->params[0].name] = action.factor; // unroll, occupancy, max_registers
  }
  return llvm::json::Object{{"kind", action.kind}, {"params", std::move(params)}};
}

llvm::json::Value kforge::tune::toJSON(const Schedule &schedule) {
  llvm::json::Array array;
  for (const Action &action : schedule)
    array.push_back(toJSON(action));
  return array;
}

static std::string join(llvm::ArrayRef<std::string> items, StringRef separator) {
  std::string out;
  for (auto [i, item] : llvm::enumerate(items))
    out += (i ? separator.str() : "") + item;
  return out;
}

static std::string joinInts(llvm::ArrayRef<int64_t> values, StringRef separator) {
  std::vector<std::string> items;
  for (int64_t v : values)
    items.push_back(std::to_string(v));
  return join(items, separator);
}

llvm::ArrayRef<int64_t> kforge::tune::tileSizeDomain(StringRef level) {
  return level == "reduction" ? kReductionSizes : kTileSizes;
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

bool kforge::tune::splitApplies(const PayloadFacts &facts) {
  return !facts.contractionOp.empty() && facts.rootOp != facts.contractionOp && facts.reductionSize > 0 &&
         facts.contractionSizes.size() >= 2 && facts.contractionOps > 0 && rowWidth(facts) > 0;
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

/// A batch_matmul payload: its staged forms take one batch per block (tile(block, 1x...)); the block's unit
/// batch is folded away before bufferization, leaving a linalg.matmul for the staged ops.
static bool isBatch(const PayloadFacts &facts) {
  return facts.contractionOp == "linalg.batch_matmul" && facts.parallelSizes.size() == 3;
}
size_t kforge::tune::matmulRowDim(const PayloadFacts &facts) { return isBatch(facts) ? 1 : 0; }

/// A tile's rows and columns of the matmul (a batch_matmul's batch extent dropped).
static std::vector<int64_t> matmulTile(std::vector<int64_t> tile, const PayloadFacts &facts) {
  if (isBatch(facts) && tile.size() == 3)
    tile.erase(tile.begin());
  return tile;
}

bool kforge::tune::mmaApplies(const PayloadFacts &facts) {
  bool matmul = facts.contractionOp == "linalg.matmul" && facts.parallelSizes.size() == 2;
  // (K a multiple of 8 but not of 16: only the pipelined staged forms, their last tile zero-filled.)
  return (matmul || isBatch(facts)) && facts.contractionK > 0 && facts.contractionK % 8 == 0 &&
         (facts.contractionOperandType == "bf16" || facts.contractionOperandType == "f16");
}

/// K ends inside the last tile of the staged, pipelined forms: cp.async zero-fills the copies past it.
static bool zeroFilledK(const Schedule &schedule, const PayloadFacts &facts) {
  return findSlot(schedule, "stage") && findSlot(schedule, "pipeline") && facts.contractionK % 8 == 0;
}

/// A batch_matmul's staged forms need stage and one batch per block.
template <typename Report>
static void checkBatchStaged(const Schedule &schedule, const PayloadFacts &facts, int index, StringRef kind,
                             Report problem) {
  if (!isBatch(facts))
    return;
  if (!findSlot(schedule, "stage"))
    problem(index, "unsupported", kind + " on a batch_matmul needs stage (its staged form takes one batch per block)");
  if (blockExtent(schedule, facts, 0) != 1)
    problem(index, "shape", kind + " on a batch_matmul needs one batch per block: tile(block, 1x...), not " +
                                std::to_string(blockExtent(schedule, facts, 0)));
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
  if (!schedule.empty() && (schedule.front().kind == "split" || schedule.front().kind == "split_k"))
    return &schedule.front();
  return nullptr;
}

PayloadFacts kforge::tune::scheduledFacts(const Schedule &schedule, const PayloadFacts &facts) {
  const Action *split = kernelSplit(schedule);
  if (!split)
    return facts;
  return split->kind == "split" ? contractionFacts(facts) : splitKFacts(facts, split->factor);
}

Schedule kforge::tune::withoutSplit(const Schedule &schedule) {
  Schedule rest;
  for (const Action &action : schedule)
    if (action.kind != "split" && action.kind != "split_k")
      rest.push_back(action);
  return rest;
}

std::vector<int64_t> kforge::tune::lanesCounts(const PayloadFacts &facts) {
  int64_t width = rowWidth(facts);
  std::vector<int64_t> counts;
  for (int64_t count = 1; count <= 1024 && width > 0; ++count)
    if (lanesCountAllowed(count) && width % count == 0)
      counts.push_back(count);
  return counts;
}

/// Why `value` is outside the domain of `kind`'s integer parameter `param`, if it is.
static std::optional<std::string> intOutOfDomain(StringRef kind, const ParamSpec &param, int64_t value) {
  bool laneCount = kind == "lanes" || kind == "split"; // split's parameter is its row kernel's lanes
  if (llvm::is_contained(param.values, value) || (laneCount && value >= 32 && lanesCountAllowed(value)))
    return std::nullopt;
  if ((kind == "prefetch_rows" || kind == "pipeline_rows") && value >= 1 && value <= 65536)
    return std::nullopt;
  return (kind + "." + param.name + " is " + std::to_string(value) + ", expected one of " +
          joinInts(param.values, ", ") + (laneCount ? " (or a multiple of 32 up to 1024)" : "") +
          (kind == "prefetch_rows" || kind == "pipeline_rows" ? " (or any count from 1 to 65536)" : ""))
      .str();
}

/// Every tile size in its level's domain: the powers of two; at block level also a divisor of an irregular
/// loop (2000 = 16 x 125 has no power-of-two tile above 16: 80 or 125 are the useful ones). Without the
/// payload's facts (parsing) such a size is left to the validation against the payload.
/// A tile size outside the level's domain is allowed where the tiled extent is irregular (not a multiple of
/// 32) and the size divides it: the loop's extent for a block tile, the block's for a thread tile (`block`,
/// when the schedule has one; e.g. 16x40 warp tiles of 80x120 blocks of a 2000x3000 matmul). Without facts
/// (parsing) such sizes are left to the validation against the payload.
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

/// Parses one action; problems are appended with `index`.
static void parseAction(const llvm::json::Value &value, int index, Action &action, std::vector<Problem> &problems) {
  auto problem = [&](StringRef code, const llvm::Twine &message) {
    problems.push_back({index, code.str(), message.str()});
  };
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return problem("bad-param", "an action must be an object {\"kind\": ..., \"params\": {...}}");
  std::optional<StringRef> kind = object->getString("kind");
  if (!kind)
    return problem("bad-param", "the action has no \"kind\" string");
  const ActionSpec *spec = findAction(*kind);
  if (!spec) {
    std::vector<std::string> kinds;
    for (const ActionSpec &s : actionRegistry())
      kinds.push_back(s.kind);
    return problem("unknown-kind", "unknown action kind '" + *kind + "' (known: " + join(kinds, ", ") + ")");
  }
  action.kind = kind->str();
  for (const auto &entry : *object)
    if (entry.first != "kind" && entry.first != "params")
      problem("bad-param", "unexpected key '" + StringRef(entry.first) + "' in the action (only kind and params)");
  const llvm::json::Object empty;
  const llvm::json::Object *params = object->getObject("params");
  if (!params && object->get("params"))
    return problem("bad-param", "\"params\" must be an object");
  if (!params)
    params = &empty;
  for (const auto &entry : *params)
    if (llvm::none_of(spec->params, [&](const ParamSpec &p) { return p.name == StringRef(entry.first); }))
      problem("bad-param", "unknown parameter '" + StringRef(entry.first) + "' of " + action.kind);

  for (const ParamSpec &param : spec->params) {
    const llvm::json::Value *v = params->get(param.name);
    if (!v) {
      problem("bad-param", action.kind + " needs parameter '" + param.name + "' (" + param.doc + ")");
      continue;
    }
    switch (param.type) {
    case ParamType::Enum: {
      std::optional<StringRef> s = v->getAsString();
      if (!s) {
        problem("bad-param", action.kind + "." + param.name + " must be a string");
        break;
      }
      if (!llvm::is_contained(param.choices, *s)) {
        problem("out-of-domain", action.kind + "." + param.name + " is '" + *s + "', expected one of " +
                                     join(param.choices, ", "));
        break;
      }
      action.level = s->str();
      break;
    }
    case ParamType::Int: {
      std::optional<int64_t> n = v->getAsInteger();
      if (!n) {
        problem("bad-param", action.kind + "." + param.name + " must be an integer");
        break;
      }
      if (std::optional<std::string> why = intOutOfDomain(action.kind, param, *n)) {
        problem("out-of-domain", *why);
        break;
      }
      action.factor = *n;
      break;
    }
    case ParamType::IntList: {
      const llvm::json::Array *list = v->getAsArray();
      if (!list) {
        problem("bad-param", action.kind + "." + param.name + " must be a list of integers");
        break;
      }
      std::vector<int64_t> values;
      for (const llvm::json::Value &element : *list) {
        std::optional<int64_t> n = element.getAsInteger();
        if (!n) {
          problem("bad-param", action.kind + "." + param.name + " must be a list of integers");
          return;
        }
        values.push_back(*n);
      }
      action.sizes = values;
      break;
    }
    }
  }
  // Domains that depend on another parameter.
  if (action.kind == "tile" && !action.level.empty()) {
    if (action.level == "reduction" && action.sizes.size() != 1)
      problem("bad-param", "tile(reduction) takes one size, for the contraction's K loop");
    checkTileDomain(action, index, problems);
  }
}

std::vector<Problem> kforge::tune::parseSchedule(const llvm::json::Value &value, Schedule &schedule) {
  std::vector<Problem> problems;
  const llvm::json::Array *actions = value.getAsArray();
  if (const llvm::json::Object *object = value.getAsObject())
    actions = object->getArray("actions");
  if (!actions) {
    problems.push_back({-1, "bad-param", "a schedule is a JSON array of actions or an object with an \"actions\" array"});
    return problems;
  }
  schedule.clear();
  for (auto [index, element] : llvm::enumerate(*actions)) {
    Action action;
    parseAction(element, static_cast<int>(index), action, problems);
    schedule.push_back(std::move(action));
  }
  return problems;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// Actions on the kernel as a whole (transform.kforge.set_kernel_attributes): rendered after the GPU mapping, on
/// the gpu.launch it made.
static bool actsOnKernel(const Action &action) {
  return action.kind == "occupancy" || action.kind == "max_registers" || action.kind == "streaming_stores" ||
         action.kind == "read_only_inputs" || action.kind == "loads_evict_last" || action.kind == "loads_evict_first";
}

int kforge::tune::actionPhase(const Action &action) {
  if (action.kind == "tile")
    return action.level == "block" ? 10 : action.level == "thread" ? 30 : 54;
  if (action.kind == "fuse")
    return action.level == "block" ? 20 : 40;
  // The other kinds, one slot each; launch bounds are applied to the kernel, last.
  static const llvm::StringMap<int> phases = {
      {"split", 5},     {"split_k", 5},   {"recompute", 41}, {"lanes", 43}, {"lane_vector", 44}, {"moments", 45}, {"mma", 46},
      {"stage", 47},    {"ldmatrix", 48}, {"pipeline", 49},  {"wgmma", 50},     {"tma", 51},       {"overlap", 52},    {"stage_epilogue", 53},
      {"unroll", 60},
      {"vectorize", 70}, {"prefetch_rows", 75}, {"pipeline_rows", 76}, {"stash", 77}, {"occupancy", 80},
      {"max_registers", 85}, {"streaming_stores", 86}, {"read_only_inputs", 87},
      {"loads_evict_last", 88}, {"loads_evict_first", 89}};
  auto phase = phases.find(action.kind);
  return phase != phases.end() ? phase->second : 90;
}

static std::string slotName(const Action &action) {
  return action.level.empty() ? action.kind : action.kind + "(" + action.level + ")";
}

const Action *kforge::tune::findSlot(const Schedule &schedule, StringRef kind, StringRef level) {
  for (const Action &action : schedule)
    if (action.kind == kind && action.level == level)
      return &action;
  return nullptr;
}

/// The most output points a SIMT contraction's thread tile may have on the GPU (an accumulator register each).
constexpr int64_t kMaxSimtAccumulators = 256;

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
  if (const Action *lanes = findSlot(schedule, "lanes"); lanes && extents.size() >= 2 && lanes->factor > 0)
    extents.back() = std::max<int64_t>(1, extents.back() / lanes->factor);
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
      counts.push_back(blockExtent(schedule, facts, d) / thread->sizes[d]);
  // lanes: the row loop's threads move to y, and x holds the lanes of each row.
  if (const Action *lanes = findSlot(schedule, "lanes"))
    counts.push_back(lanes->factor);
  // mma: each thread tile is a warp's; x holds its 32 lanes times the warps along x. Staged, the block is
  // one dimension of 32 lanes per warp of the grid.
  if (findSlot(schedule, "mma") && !counts.empty())
    counts.back() *= 32;
  if (findSlot(schedule, "stage")) {
    int64_t threads = 1;
    for (int64_t c : counts)
      threads *= c;
    counts = {threads};
  }
  for (size_t i = 0; i < counts.size() && i < 3; ++i)
    dims[i] = counts[counts.size() - 1 - i];
  return dims;
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
  if ((facts.contractionOp != "linalg.matmul" && !isBatch(facts)) ||
      (facts.contractionOperandType != "bf16" && facts.contractionOperandType != "f16")) {
    problem(index, "unsupported", "mma needs a linalg.matmul (or batch_matmul) with bf16 or f16 operands; this "
                                  "payload's contraction is " +
                                      (facts.contractionOp.empty() ? std::string("none")
                                                                   : facts.contractionOp + " on " +
                                                                         facts.contractionOperandType));
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
    problem(index, "shape", "mma: the warp tile " + joinInts(warpTile, "x") +
                                " must be a multiple of 16 rows and 8 columns (the m16n8k16 instruction), at most 64x64 "
                                "(its accumulators live in registers)");
  const Action &mma = schedule[index];
  if (mma.factor > 0 && facts.contractionK % (16 * mma.factor) && !zeroFilledK(schedule, facts))
    problem(index, "shape", "mma(" + std::to_string(mma.factor) + "): K (" + std::to_string(facts.contractionK) +
                                ") must be a multiple of 16 x k_steps");
  checkNoSimtMatmulActions(schedule, index, "mma", "in steps of 16", problem);
}

/// stage's preconditions without mma (those transform.kforge.matmul_to_simt_staged checks): an fp32
/// linalg.matmul, thread shares of whole groups of 4 rows and columns, whole 4-element copies, 227 KB of shared memory.
template <typename Report>
static void checkSimtStage(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  if (!((facts.contractionOp == "linalg.matmul" && facts.parallelSizes.size() == 2) || isBatch(facts)) ||
      facts.contractionOperandType != "f32") {
    problem(index, "unsupported", "stage without mma needs an fp32 linalg.matmul (with bf16/f16 operands: mma "
                                  "first); this payload's contraction is " +
                                      (facts.contractionOp.empty() ? std::string("none")
                                                                   : facts.contractionOp + " on " +
                                                                         facts.contractionOperandType));
    return;
  }
  const Action *thread = findSlot(schedule, "tile", "thread");
  if (!thread) {
    problem(index, "precondition", "stage needs tile(thread) before it (each thread's share of the block tile)");
    return;
  }
  checkNoSimtMatmulActions(schedule, index, "stage", "in tiles of block_k", problem);
  checkBatchStaged(schedule, facts, index, "stage", problem);
  int64_t blockK = schedule[index].factor;
  std::vector<int64_t> share = matmulTile(innermostTile(schedule, facts), facts);
  size_t m = matmulRowDim(facts);
  int64_t rows = blockExtent(schedule, facts, m), cols = blockExtent(schedule, facts, m + 1);
  int64_t threads = blockDims(schedule, facts)[0];
  if (threads <= 0 || share[0] <= 0 || share[1] <= 0)
    return; // a thread tile larger than its block: tile(thread) reports it
  if (share[0] % 4 || share[1] % 4)
    problem(index, "shape", "stage: each thread's share " + joinInts(share, "x") +
                                " must be whole groups of 4 rows and 4 columns");
  if (blockK <= 0 || facts.contractionK % blockK || blockK % 4)
    problem(index, "shape", "stage(" + std::to_string(blockK) + "): block_k must be a multiple of 4 dividing K (" +
                                std::to_string(facts.contractionK) + ")");
  int64_t bytes = 2 * blockK * ((rows + 4) + cols) * 4;
  if (bytes > kMaxSharedBytesPerBlock)
    problem(index, "too-large", "stage(" + std::to_string(blockK) + "): two stages of A and B take " +
                                    std::to_string(bytes) + " bytes of shared memory; a block has at most " +
                                    std::to_string(kMaxSharedBytesPerBlock));
}

/// pipeline's preconditions (those of matmul_to_mma_sync's async_stages): a staged mma, and rows of A (K
/// long) and B (N long) that start on whole 16-byte copies. Its shared memory is checked with stage's.
template <typename Report>
static void checkPipeline(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  if (!findSlot(schedule, "stage")) {
    problem(index, "precondition", "pipeline needs stage before it (it fills the staged tiles)");
    return;
  }
  if (!findSlot(schedule, "mma")) {
    // The fp32 staged SGEMM: two stages, B's tiles by cp.async (A's are stored transposed, through registers).
    if (schedule[index].factor != 2)
      problem(index, "shape", "pipeline(" + std::to_string(schedule[index].factor) +
                                  ") on the fp32 staged SGEMM: it has two stages (pipeline(2): B's tiles by cp.async)");
    return;
  }
  int64_t n = facts.parallelSizes.empty() ? 0 : facts.parallelSizes.back();
  if (facts.contractionK % 8 || n % 8)
    problem(index, "shape", "pipeline copies 16 bytes at a time: K (" + std::to_string(facts.contractionK) +
                                ") and the columns (" + std::to_string(n) + ") must be multiples of 8");
}

/// wgmma's preconditions (those of matmul_to_mma_sync's wgmma option).
template <typename Report>
static void checkWgmma(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  const Action *stage = findSlot(schedule, "stage");
  if (!findSlot(schedule, "mma") || !stage || !findSlot(schedule, "pipeline")) {
    problem(index, "precondition", "wgmma needs mma, stage and pipeline before it (it multiplies the pipelined stages)");
    return;
  }
  if (stage->factor != 64)
    problem(index, "shape", "wgmma: stage(" + std::to_string(stage->factor) +
                                ") must be stage(64) (one 128-byte swizzled row of K per tile)");
  if (findSlot(schedule, "ldmatrix"))
    problem(index, "unsupported", "wgmma reads shared memory itself: it does not combine with ldmatrix");
  std::vector<int64_t> warpTile = matmulTile(innermostTile(schedule, facts), facts);
  size_t m = matmulRowDim(facts);
  int64_t rows = blockExtent(schedule, facts, m), cols = blockExtent(schedule, facts, m + 1);
  if (warpTile[0] != 16 || warpTile[1] != cols || rows % 64 || cols % 64 || cols > 256)
    problem(index, "shape", "wgmma: the warp tile " + joinInts(warpTile, "x") + " must be 16 rows by the block's " +
                                std::to_string(cols) + " columns, the block " + std::to_string(rows) + "x" +
                                std::to_string(cols) + " a multiple of 64 rows and of 64 columns, at most 256");
}

/// stage's preconditions (those transform.kforge.matmul_to_mma_sync checks in its staged form).
template <typename Report>
static void checkStage(const Schedule &schedule, const PayloadFacts &facts, int index, Report problem) {
  const Action *mma = findSlot(schedule, "mma");
  int64_t blockK = schedule[index].factor;
  if (!mma) {
    checkSimtStage(schedule, facts, index, problem);
    return;
  }
  if (mma->factor != 1)
    problem(index, "unsupported", "stage: a staged tile takes block_k / 16 steps of K per iteration; use mma(1)");
  if (blockK % 16)
    problem(index, "shape", "stage(" + std::to_string(blockK) + ") with mma: block_k must be a multiple of 16");
  std::vector<int64_t> dims = blockDims(schedule, facts);
  size_t m = matmulRowDim(facts);
  int64_t threads = dims[0], rows = blockExtent(schedule, facts, m), cols = blockExtent(schedule, facts, m + 1);
  if (threads <= 0)
    return; // a thread tile larger than its block: tile(thread) reports it
  // (The block's threads need not divide the tiles' 8-element vectors: the last round repeats the last one.)
  if (blockK <= 0 || (facts.contractionK % blockK && !zeroFilledK(schedule, facts)))
    problem(index, "shape", "stage(" + std::to_string(blockK) + "): K (" + std::to_string(facts.contractionK) +
                                ") is not a multiple of block_k (with pipeline, K a multiple of 8 is enough)");
  else if (cols % 8)
    problem(index, "shape", "stage(" + std::to_string(blockK) + "): the block's " + std::to_string(cols) +
                                " columns are not whole 8-element vectors");
  const Action *pipeline = findSlot(schedule, "pipeline");
  int64_t stages = pipeline && pipeline->factor >= 2 ? pipeline->factor : 2;
  // A (rows x block_k) and B (block_k x cols), rows padded by 8 elements, in each stage.
  int64_t bytes = stages * (rows * (blockK + 8) + blockK * (cols + 8)) * 2;
  if (bytes > kMaxSharedBytesPerBlock)
    problem(index, "too-large", "stage(" + std::to_string(blockK) + "): " + std::to_string(stages) +
                                    " stages of A and B take " +
                                    std::to_string(bytes) + " bytes of shared memory; a block has at most " +
                                    std::to_string(kMaxSharedBytesPerBlock));
}

/// The row a lanes action spreads over its lanes: a 2-D root's last loop within the block, or the reduction a 1-D
/// root is made of (a row sum); 0 for other roots.
static int64_t lanesRowWidth(const Schedule &schedule, const PayloadFacts &facts) {
  size_t rank = facts.parallelSizes.size();
  if (rank == 1 && facts.reductionSize > 0)
    return facts.reductionSize;
  return rank == 2 ? blockExtent(schedule, facts, rank - 1) : 0;
}

std::vector<Problem> kforge::tune::validateSchedule(const Schedule &schedule, const PayloadFacts &facts,
                                                    StringRef target) {
  std::vector<Problem> problems;
  auto problem = [&](int index, StringRef code, const llvm::Twine &message) {
    problems.push_back({index, code.str(), message.str()});
  };
  bool gpu = target == "gpu";
  size_t rank = facts.parallelSizes.size();
  // split / split_k: the schedule after it is the contraction's (split_k: the partial matmul's), checked against
  // that op's loops.
  auto isSplit = [](const Action &a) { return a.kind == "split" || a.kind == "split_k"; };
  auto splitAt = llvm::find_if(schedule, isSplit);
  if (splitAt != schedule.end()) {
    int index = static_cast<int>(splitAt - schedule.begin());
    const std::string &kind = splitAt->kind;
    const ActionSpec *spec = findAction(kind);
    if (!llvm::is_contained(spec->targets, target.str()))
      problem(index, "target", kind + " is not available on the " + target + " target");
    if (std::optional<std::string> why = intOutOfDomain(kind, spec->params[0], splitAt->factor))
      problem(index, "out-of-domain", *why);
    if (index != 0)
      problem(index, "order", kind + " comes first, once");
    for (size_t j = index + 1; j < schedule.size(); ++j)
      if (isSplit(schedule[j]))
        problem(static_cast<int>(j), "order", "split and split_k come first, once, one of them");
    if (kind == "split") {
      int64_t width = rowWidth(facts);
      if (!splitApplies(facts))
        problem(index, "precondition", "split needs a contraction whose result feeds row reductions (gemm + softmax, "
                                       "gemm + sigmoid + row sum); this payload has none");
      else if (splitAt->factor > 0 && width % splitAt->factor != 0)
        problem(index, "shape", "split(" + std::to_string(splitAt->factor) + "): the row (" + std::to_string(width) +
                                    " elements) is not a multiple of the lanes");
    } else {
      if (!splitKApplies(facts))
        problem(index, "precondition", "split_k needs a payload that is a plain matmul (linalg.matmul and its fill, "
                                       "nothing after it)");
      else if (splitAt->factor > 0 && facts.contractionK % splitAt->factor != 0)
        problem(index, "shape", "split_k(" + std::to_string(splitAt->factor) + "): K (" +
                                    std::to_string(facts.contractionK) + ") is not a multiple of the parts");
    }
    if (!problems.empty())
      return problems;
    Schedule rest = withoutSplit(schedule);
    if (rest.empty())
      problem(-1, "precondition", kind + " needs the contraction's schedule after it (at least tile(block))");
    for (Problem p : validateSchedule(rest, scheduledFacts(schedule, facts), target)) {
      if (p.action >= 0)
        p.action += 1;
      problems.push_back(p);
    }
    return problems;
  }
  int lastPhase = 0;
  for (auto [i, action] : llvm::enumerate(schedule)) {
    int index = static_cast<int>(i);
    const ActionSpec *spec = findAction(action.kind);
    if (!spec) {
      problem(index, "unknown-kind", "unknown action kind '" + action.kind + "'");
      continue;
    }
    if (!llvm::is_contained(spec->targets, target.str()))
      problem(index, "target", action.kind + " is not available on the " + target + " target");
    // Domains again: schedules built in memory (by a policy) have not been through parseSchedule.
    if (action.kind == "tile")
      checkTileDomain(action, index, problems, &facts, findSlot(schedule, "tile", "block"));
    if (spec->params.size() == 1 && spec->params[0].type == ParamType::Int)
      if (std::optional<std::string> why = intOutOfDomain(action.kind, spec->params[0], action.factor))
        problem(index, "out-of-domain", *why);
    int phase = actionPhase(action);
    if (phase <= lastPhase) {
      problem(index, "order",
              slotName(action) + " is out of order or repeated: each slot appears at most once, in the order "
                                 "tile(block), fuse(block), tile(thread), fuse(thread), recompute, lanes, lane_vector, moments, mma, stage, "
                                 "ldmatrix, pipeline, wgmma, tma, overlap, stage_epilogue, tile(reduction), unroll, vectorize, prefetch_rows, "
                                 "pipeline_rows, stash, "
                                 "occupancy, "
                                 "max_registers, streaming_stores, read_only_inputs, loads_evict_last, "
                                 "loads_evict_first");
    }
    lastPhase = std::max(lastPhase, phase);

    // Preconditions: what must come earlier.
    auto before = [&](StringRef kind, StringRef level) {
      for (size_t j = 0; j < i; ++j)
        if (schedule[j].kind == kind && schedule[j].level == level)
          return true;
      return false;
    };
    if (action.kind == "tile" && action.level == "thread" && !before("tile", "block"))
      problem(index, "precondition", "tile(thread) needs tile(block) before it");
    if (action.kind == "fuse" && !before("tile", action.level))
      problem(index, "precondition", "fuse(" + action.level + ") needs tile(" + action.level + ") before it");
    if (action.kind == "fuse" && action.level == "thread" && !before("fuse", "block"))
      problem(index, "precondition", "fuse(thread) needs fuse(block) before it");
    if (action.kind == "fuse" && facts.linalgOps < 2)
      problem(index, "precondition", "fuse: the root has no producers to fuse");
    if (action.kind == "recompute" && !before("fuse", "thread"))
      problem(index, "precondition", "recompute needs fuse(thread) before it (it rewrites the producers fused into "
                                     "the thread's loop)");
    if (action.kind == "unroll" && !before("tile", "reduction"))
      problem(index, "precondition", "unroll needs tile(reduction) before it (it unrolls that loop)");
    if (action.kind == "lanes") {
      // The row: a 2-D root's last loop, or the reduction a 1-D root is made of (a row sum).
      bool rowSums = rank == 1 && facts.reductionSize > 0;
      const Action *thread = findSlot(schedule, "tile", "thread");
      int rowLoops = 0;
      bool oneRow = thread && (rank == 2 || rowSums);
      if (oneRow)
        for (size_t d = 0; d < rank; ++d) {
          int64_t size = thread->sizes[d], extent = blockExtent(schedule, facts, d);
          if (d + 1 == rank && rank == 2)
            oneRow = oneRow && (size == 0 || size == extent);
          else if (size != 0)
            oneRow = oneRow && size == 1 && ++rowLoops == 1;
        }
      int64_t width = lanesRowWidth(schedule, facts);
      if (!facts.contractionOp.empty() || (rank != 2 && !rowSums))
        problem(index, "unsupported", "lanes: only 2-D roots and row sums without a contraction (softmax, norms, "
                                      "elementwise chains, row sums) are distributed over lanes");
      else if (!before("tile", "thread") || !oneRow || rowLoops != 1)
        problem(index, "precondition", "lanes needs tile(thread) of one row per thread before it: size 1 on the "
                                       "rows, the last loop of a 2-D root whole (0)");
      else if (facts.linalgOps > 1 && !before("fuse", "thread"))
        problem(index, "precondition", "lanes needs fuse(thread) before it (the row's producers in the thread)");
      else if (width % action.factor != 0)
        problem(index, "shape", "lanes(" + std::to_string(action.factor) + "): the row (" + std::to_string(width) +
                                    " elements) is not a multiple of the lanes");
      else if (action.factor > 32 && blockExtent(schedule, facts, 0) != 1)
        problem(index, "precondition", "lanes(" + std::to_string(action.factor) +
                                           ") spreads a row over several warps, reduced over the whole block: "
                                           "tile(block) must hold one row (size 1 on the rows)");

      std::vector<int64_t> dims = blockDims(schedule, facts);
      if (dims[0] * dims[1] * dims[2] > 1024)
        problem(index, "too-large", "lanes(" + std::to_string(action.factor) + ") makes " +
                                        std::to_string(dims[0] * dims[1] * dims[2]) +
                                        " threads per block; the GPU allows 1024");
    }
    if (action.kind == "lane_vector") {
      const Action *lanes = findSlot(schedule, "lanes");
      int64_t width = lanesRowWidth(schedule, facts);
      if (!lanes || !before("lanes", ""))
        problem(index, "precondition", "lane_vector needs lanes before it (it widens each lane's columns)");
      else if (lanes->factor > 0 && width % (lanes->factor * action.factor) != 0)
        problem(index, "shape", "lane_vector(" + std::to_string(action.factor) + "): the row (" +
                                    std::to_string(width) + " elements) is not a multiple of " +
                                    std::to_string(action.factor) + " x " + std::to_string(lanes->factor) +
                                    " lanes");
    }
    if (action.kind == "moments") {
      const Action *lanes = findSlot(schedule, "lanes");
      if (!lanes || !before("lanes", ""))
        problem(index, "precondition", "moments needs lanes before it (it merges the lanes' partial statistics)");
      else if (facts.rowMoments == 0)
        problem(index, "payload", "moments: the payload has no row sum whose centred values (x - sum / N) are "
                                  "squared and summed (a layernorm's mean and variance)");
      else if (lanes->factor > 32 && !llvm::isPowerOf2_64(lanes->factor / 32))
        problem(index, "shape", "moments with lanes(" + std::to_string(lanes->factor) + "): a row over " +
                                    std::to_string(lanes->factor / 32) +
                                    " warps; the warps' partials merge pairwise, so their number must be a power of 2");
    }
    if (action.kind == "prefetch_rows") {
      if (!findSlot(schedule, "lanes") || !before("lanes", ""))
        problem(index, "precondition", "prefetch_rows needs lanes before it (a row kernel)");
      else if (blockExtent(schedule, facts, 0) != 1)
        problem(index, "precondition", "prefetch_rows prefetches the row of each block: tile(block) must hold one "
                                       "row (size 1 on the rows), not " +
                                           std::to_string(blockExtent(schedule, facts, 0)));
    }
    // A register cap above what the block can launch with: ptxas honours .maxnreg over the block size, and a
    // kernel of more registers than a multiprocessor has fails to launch (benchmark call 20: lanes(800) with
    // max_registers(128), 102,400 registers). Checked on row kernels, whose block is exactly their lanes.
    if (action.kind == "max_registers" && findSlot(schedule, "lanes")) {
      std::vector<int64_t> dims = blockDims(schedule, facts);
      int64_t threads = dims[0] * dims[1] * dims[2];
      if (threads * action.factor > 65536)
        problem(index, "too-large", "max_registers(" + std::to_string(action.factor) + ") lets a block of " +
                                        std::to_string(threads) + " threads take " +
                                        std::to_string(threads * action.factor) +
                                        " registers; a multiprocessor has 65536 (the launch would fail)");
    }
    if (action.kind == "pipeline_rows") {
      const Action *lanes = findSlot(schedule, "lanes");
      int64_t elementBytes = facts.elementBytes();
      if (!lanes || !before("lanes", "") || lanes->factor <= 32)
        problem(index, "precondition", "pipeline_rows needs lanes of whole warps before it (a block reducing its row)");
      else if (!before("vectorize", ""))
        problem(index, "precondition", "pipeline_rows needs vectorize before it (the row's reads are vectors)");
      else if (findSlot(schedule, "prefetch_rows") || findSlot(schedule, "stash") || findSlot(schedule, "moments"))
        problem(index, "unsupported",
                "pipeline_rows copies the next row itself after the block's first reduction: not with prefetch_rows, "
                "stash or moments");
      else if (lanesRowWidth(schedule, facts) * elementBytes > kMaxSharedBytesPerBlock - 1024)
        problem(index, "too-large", "pipeline_rows: a row of " +
                                        std::to_string(lanesRowWidth(schedule, facts) * elementBytes) +
                                        " bytes does not fit in a block's shared memory");
    }
    if (action.kind == "stash") {
      const Action *lanes = findSlot(schedule, "lanes");
      if (!lanes || !before("lanes", "") || lanes->factor <= 32)
        problem(index, "precondition", "stash needs lanes of whole warps before it (a block reducing its row)");
      else if (!before("vectorize", ""))
        problem(index, "precondition", "stash needs vectorize before it (it keeps parts of the lanes' row vectors)");
    }
    if (action.kind == "mma")
      checkMma(schedule, facts, index, problem);
    if (action.kind == "stage")
      checkStage(schedule, facts, index, problem);
    if (action.kind == "pipeline")
      checkPipeline(schedule, facts, index, problem);
    if (action.kind == "wgmma")
      checkWgmma(schedule, facts, index, problem);
    if (action.kind == "tma" && !findSlot(schedule, "wgmma"))
      problem(index, "precondition", "tma needs wgmma before it (it fills wgmma's swizzled stages)");
    if (action.kind == "stage_epilogue" && (!findSlot(schedule, "mma") || !findSlot(schedule, "pipeline")))
      problem(index, "precondition",
              "stage_epilogue needs mma, stage and pipeline before it (the result goes through the stages' memory)");
    if (action.kind == "overlap") {
      const Action *pipeline = findSlot(schedule, "pipeline");
      if (!findSlot(schedule, "wgmma") || !pipeline || pipeline->factor < 3)
        problem(index, "precondition",
                "overlap needs wgmma and pipeline(3) or more before it (the copies run stages - 2 tiles ahead)");
    }
    if (action.kind == "ldmatrix") {
      if (!before("stage", ""))
        problem(index, "precondition", "ldmatrix needs stage before it (it reads the staged shared memory)");
      else if (innermostTile(schedule, facts)[1] % 16)
        problem(index, "shape", "ldmatrix reads B two 8-column tiles at a time: the warp tile's columns (" +
                                    std::to_string(innermostTile(schedule, facts)[1]) + ") must be a multiple of 16");
    }
    if (action.kind == "loads_evict_first" && before("loads_evict_last", ""))
      problem(index, "unsupported",
              "loads_evict_first and loads_evict_last are two L2 policies for the same loads: choose one");
    if (actsOnKernel(action) && !before("tile", "block"))
      problem(index, "precondition",
              action.kind + " needs tile(block) before it (it " +
                  (action.kind == "occupancy" || action.kind == "max_registers" ? "bounds" : "acts on") +
                  " the kernel of the grid)");

    // Shapes.
    if (action.kind == "tile" && action.level != "reduction") {
      if (action.sizes.size() != rank) {
        problem(index, "shape",
                "tile(" + action.level + ") needs " + std::to_string(rank) + " sizes, one per parallel loop of the root " +
                    facts.rootOp + " (loop sizes " + joinInts(facts.parallelSizes, "x") + ")");
        continue;
      }
      int tiled = 0;
      for (size_t d = 0; d < rank; ++d) {
        int64_t size = action.sizes[d];
        if (size == 0)
          continue;
        ++tiled;
        int64_t extent = action.level == "block" ? facts.parallelSizes[d] : blockExtent(schedule, facts, d);
        if (size > extent || extent % size != 0)
          problem(index, "shape",
                  "tile(" + action.level + ") size " + std::to_string(size) + " does not divide loop " +
                      std::to_string(d) + " (" + std::to_string(extent) +
                      (action.level == "thread" ? " in the block tile)" : ")"));
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
      // The tile a single thread runs: the thread tile, or the block tile when there is none (one thread per
      // block).
      bool threadsTile = action.level == "thread" || (action.level == "block" && !findSlot(schedule, "tile", "thread"));
      bool fusedHere = findSlot(schedule, "fuse", action.level == "thread" ? "thread" : "block") != nullptr;
      if (threadsTile && gpu && facts.reductionSize > 0 && fusedHere) {
        // A reduction fused into a thread's tile keeps whole rows of its intermediates in the thread's local
        // memory; CUDA allows 512 KB per thread (launches failed on the H200 at 1 MB, ran at 256 KB).
        std::vector<int64_t> innermost = innermostTile(schedule, facts);
        int64_t rows = 1;
        for (size_t d = 0; d < innermost.size(); ++d)
          if (!llvm::is_contained(facts.wholeDims, static_cast<int64_t>(d)))
            rows *= innermost[d];
        int64_t bytes = rows * facts.reductionSize * 4;
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
          problem(index, "too-large", "tile(thread) makes " + std::to_string(threads) +
                                          " threads per block; the GPU allows 1024");
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
    if (action.kind == "tile" && action.level == "reduction") {
      std::string innermost = before("tile", "thread") ? "thread" : before("tile", "block") ? "block" : "";
      if (!facts.contractionOp.empty() && facts.rootOp != facts.contractionOp && !innermost.empty() &&
          !before("fuse", innermost))
        problem(index, "precondition",
                "tile(reduction): the contraction is a producer of the root, outside the " + innermost +
                    " loop; fuse(" + innermost + ") first");
      if (facts.contractionOp.empty()) {
        problem(index, "precondition", "tile(reduction) needs a contraction (linalg.matmul or linalg.batch_matmul)");
      } else if (!action.sizes.empty() &&
                 (action.sizes[0] > facts.contractionK || facts.contractionK % action.sizes[0] != 0)) {
        problem(index, "shape",
                "tile(reduction) size " + std::to_string(action.sizes[0]) + " does not divide K = " +
                    std::to_string(facts.contractionK));
      }
    }
    if (action.kind == "vectorize") {
      // MLIR 22 vectorizes 1-D convolutions only: a 2-D one fails to compile ("Attempted to vectorize, but
      // failed"), which scripts/gpu/precheck.py found the search proposing for conv2d_nhwc.
      if (StringRef(facts.rootOp).starts_with("linalg.conv_2d") ||
          StringRef(facts.rootOp).starts_with("linalg.conv_3d") ||
          StringRef(facts.rootOp).starts_with("linalg.depthwise_conv_2d"))
        problem(index, "unsupported",
                "vectorize: MLIR 22 vectorizes 1-D convolutions only, not the root " + facts.rootOp);
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
                                          (lanes && lanes->factor > 0 ? lanes->factor : 1));
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
  }
  if (gpu && !findSlot(schedule, "tile", "block"))
    problem(-1, "precondition", "the gpu target needs tile(block): without it nothing runs on the device");
  if (gpu && facts.linalgOps > 1 && findSlot(schedule, "tile", "block") && !findSlot(schedule, "fuse", "block"))
    problem(-1, "precondition",
            "the root has producers: on the gpu target they need fuse(block), or they would run on the host");
  if (gpu && findSlot(schedule, "fuse", "block") && findSlot(schedule, "tile", "thread") &&
      !findSlot(schedule, "fuse", "thread"))
    problem(-1, "precondition", "with tile(thread), fused producers need fuse(thread), or every thread runs them");
  return problems;
}

std::vector<Problem> kforge::tune::checkSchedule(const llvm::json::Value &value, const PayloadFacts &facts,
                                                 StringRef target, Schedule &schedule) {
  std::vector<Problem> problems = parseSchedule(value, schedule);
  return problems.empty() ? validateSchedule(schedule, facts, target) : problems;
}

llvm::json::Value kforge::tune::invalidScheduleReport(llvm::ArrayRef<Problem> problems) {
  llvm::json::Array list;
  for (const Problem &p : problems)
    list.push_back(toJSON(p));
  return llvm::json::Object{{"status", "invalid"}, {"problems", std::move(list)}};
}

//===----------------------------------------------------------------------===//
// Rendering
//===----------------------------------------------------------------------===//

namespace {
/// Builds the transform library text line by line, keeping fresh SSA names.
class Renderer {
public:
  Renderer(const PayloadFacts &facts, StringRef target) : facts(facts), gpu(target == "gpu") {}

  std::string render(const Schedule &schedule, std::vector<int> *actionLines) {
    const Action *twoKernels = kernelSplit(schedule);
    const Action *split = twoKernels && twoKernels->kind == "split" ? twoKernels : nullptr;
    const Action *splitK = twoKernels && twoKernels->kind == "split_k" ? twoKernels : nullptr;
    bool fuses = twoKernels || findSlot(schedule, "fuse", "block") != nullptr;
    line("// A kforge schedule, rendered by kforge-tune from the actions below (one fragment per action).");
    line("// Replay: kforge-opt PAYLOAD -transform-preload-library=transform-library-paths=THIS_FILE "
         "-transform-interpreter");
    line("//   actions: " + describe(schedule));
    line("module attributes {transform.with_named_sequence} {");
    if (fuses)
      renderProducerMatchers(split != nullptr);
    if (twoKernels)
      renderKernelLoopMatcher();
    line("  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {");
    if (split) {
      // Two sets of producers: the row kernel's, and the contraction's (its init's fill).
      line("    %entry = " + matchFunc("%module"));
      line("    %marked = transform.foreach_match in %entry @match_fusable_producer -> @mark_producer : " + kUnary);
      line("    %func = transform.foreach_match in %marked @match_contraction_producer -> @mark_contraction_producer : " +
           kUnary);
    } else if (fuses) {
      // foreach_match consumes the function's handle and returns it.
      line("    %entry = " + matchFunc("%module"));
      line("    %func = transform.foreach_match in %entry @match_fusable_producer -> @mark_producer : " + kUnary);
    } else {
      line("    %func = " + matchFunc("%module"));
    }
    line("    %return = transform.structured.match ops{[\"func.return\"]} in %func : " + kUnary);
    line("    %root = transform.get_producer_of_operand %return[0] : " + kUnary);
    root = "%root";
    func = "%func";
    inner = "%func";
    std::vector<int> starts(schedule.size(), -1);
    PayloadFacts rootFacts = facts;
    if (split) {
      // The contraction's kernel first: once its fill is fused, nothing of it is left at the function's level
      // for the row kernel's fusions to take. The actions after split schedule it, as the root.
      facts = contractionFacts(rootFacts);
      producerAttr = "kforge.contraction_producer";
      leftoverPasses = false;
      root = fresh("contraction_root");
      line("    " + root + " = transform.structured.match ops{[\"" + facts.contractionOp + "\"]} in %func : " + kUnary);
      secondKernelDims = {split->factor, 1, 1};
    }
    if (splitK) {
      // The partial matmul over (parts, M, N) with K / parts, then (after its schedule) the sum of the partials.
      starts[0] = static_cast<int>(lines.size()) + 1;
      line("    // action 0: " + describe(*splitK) + ": partial matmuls over slices of K, then their sum");
      line("    %partials_init, %partials_fill, %partial, %partials_sum = transform.structured.split_reduction %root "
           "{split_factor = " + std::to_string(splitK->factor) + ", insert_split_dimension = 0} : "
           "(!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)");
      line("    transform.annotate %partials_fill \"kforge.contraction_producer\" : !transform.any_op");
      facts = splitKFacts(rootFacts, splitK->factor);
      producerAttr = "kforge.contraction_producer";
      leftoverPasses = false;
      root = "%partial";
      splitKSchedule = true;
    }
    Schedule scheduled = twoKernels ? withoutSplit(schedule) : schedule; // what the actions below act on
    for (auto [i, action] : llvm::enumerate(schedule)) {
      if (twoKernels && i == 0)
        continue;
      if (actsOnKernel(action) || action.kind == "mma" || action.kind == "stage" || action.kind == "ldmatrix" ||
          action.kind == "pipeline" || action.kind == "wgmma" || action.kind == "tma" || action.kind == "overlap" ||
          action.kind == "stage_epilogue" || action.kind == "prefetch_rows" || action.kind == "stash" ||
          action.kind == "pipeline_rows")
        continue; // after the finish: it needs the gpu.launch the mapping makes (mma: the bufferized warp tiles)
      starts[i] = static_cast<int>(lines.size()) + 1;
      line("    // action " + std::to_string(i) + ": " + describe(action));
      renderAction(action, scheduled);
    }
    if (split) {
      // Then the row kernel, on the payload's root.
      starts[0] = static_cast<int>(lines.size()) + 1;
      line("    // action 0: " + describe(*split) + ": the ops after the contraction, one row per block");
      facts = rootFacts;
      producerAttr = "kforge.producer";
      leftoverPasses = true;
      std::string rowRoot = fresh("row_root");
      line("    " + rowRoot + " = transform.get_producer_of_operand %return[0] : " + kUnary);
      root = rowRoot;
      inner = "%func";
      renderRowKernel(split->factor);
      facts = contractionFacts(rootFacts);
    }
    if (splitK) {
      line("    // the sum of the partials (split_k's second kernel)");
      facts = rootFacts;
      producerAttr = "kforge.producer";
      leftoverPasses = true;
      root = "%partials_sum";
      inner = "%func";
      renderPartialsSum();
      facts = splitKFacts(rootFacts, splitK->factor);
    }
    if (isBatch(facts) && (findSlot(schedule, "mma") || findSlot(schedule, "stage")))
      renderFoldUnitBatch();
    int finishStart = static_cast<int>(lines.size()) + 1;
    line("    // finish (" + std::string(gpu ? "gpu" : "cpu") + "): bufferize" +
         (gpu ? ", map loops to the grid and the block" : "") + ", lower vectors");
    renderFinish(scheduled);
    for (auto [i, action] : llvm::enumerate(schedule)) {
      if (action.kind != "stage" || findSlot(schedule, "mma"))
        continue;
      starts[i] = static_cast<int>(lines.size()) + 1;
      std::vector<int64_t> share = matmulTile(innermostTile(schedule, facts), facts);
      size_t m = matmulRowDim(facts);
      int64_t threadRows = blockExtent(schedule, facts, m) / share[0],
              threadCols = blockExtent(schedule, facts, m + 1) / share[1];
      line("    // action " + std::to_string(i) + ": " + describe(action) +
           ": the block's matmul through shared memory, each thread's share in registers");
      std::string stageFunc = fresh("stage_func"), matmuls = fresh("block_matmuls");
      line("    " + stageFunc + " = " + matchFunc("%bufferized"));
      line("    " + matmuls + " = transform.structured.match ops{[\"linalg.matmul\"]} in " + stageFunc + " : " + kUnary);
      line("    transform.kforge.matmul_to_simt_staged " + matmuls + " {block_k = " + std::to_string(action.factor) +
           ", thread_grid = array<i64: " + std::to_string(threadRows) + ", " + std::to_string(threadCols) + ">" +
           (findSlot(schedule, "pipeline") ? ", async_b" : "") + "} : (!transform.any_op) -> ()");
      line("    transform.apply_cse to " + stageFunc + " : !transform.any_op");
    }
    for (auto [i, action] : llvm::enumerate(schedule)) {
      if (action.kind != "mma")
        continue;
      starts[i] = static_cast<int>(lines.size()) + 1;
      line("    // action " + std::to_string(i) + ": " + describe(action) +
           ": each warp's bufferized matmul tile to mma.sync, its epilogue in registers");
      std::string mmaFunc = fresh("mma_func"), matmuls = fresh("warp_matmuls");
      line("    " + mmaFunc + " = " + matchFunc("%bufferized"));
      line("    " + matmuls + " = transform.structured.match ops{[\"linalg.matmul\"]} in " + mmaFunc + " : " + kUnary);
      std::string staging;
      if (const Action *stage = findSlot(schedule, "stage")) {
        std::vector<int64_t> warpTile = matmulTile(innermostTile(schedule, facts), facts);
        size_t m = matmulRowDim(facts);
        int64_t warpRows = blockExtent(schedule, facts, m) / warpTile[0],
                warpCols = blockExtent(schedule, facts, m + 1) / warpTile[1];
        staging = ", block_k = " + std::to_string(stage->factor) + ", warp_grid = array<i64: " +
                  std::to_string(warpRows) + ", " + std::to_string(warpCols) + ">" +
                  (findSlot(schedule, "ldmatrix") ? ", ldmatrix" : "");
        if (const Action *pipeline = findSlot(schedule, "pipeline"))
          staging += ", async_stages = " + std::to_string(pipeline->factor);
        if (findSlot(schedule, "wgmma"))
          staging += ", wgmma";
        if (findSlot(schedule, "tma"))
          staging += ", tma";
        if (findSlot(schedule, "overlap"))
          staging += ", wgmma_in_flight = 1";
        if (findSlot(schedule, "stage_epilogue"))
          staging += ", stage_epilogue";
      }
      line("    transform.kforge.matmul_to_mma_sync " + matmuls + " {k_steps = " + std::to_string(action.factor) +
           staging + "} : (!transform.any_op) -> ()");
      line("    transform.apply_cse to " + mmaFunc + " : !transform.any_op");
    }
    // The row kernels' ops on the gpu.launch, each with its one integer attribute.
    static const struct {
      const char *kind, *result, *op, *attribute, *what;
    } launchOps[] = {
        {"prefetch_rows", "prefetching", "prefetch_rows_to_l2", "ahead",
         "each block prefetches the row a block that many rows later reads"},
        {"pipeline_rows", "pipelined", "pipeline_rows", "blocks",
         "blocks loop over rows, the next row copied into shared memory meanwhile"},
        {"stash", "stashed", "stash_rows_in_shared", "quarters",
         "part of each lane's row values in shared memory across the block's reductions"},
    };
    for (const auto &op : launchOps)
      for (auto [i, action] : llvm::enumerate(schedule)) {
        if (action.kind != op.kind)
          continue;
        starts[i] = static_cast<int>(lines.size()) + 1;
        line("    // action " + std::to_string(i) + ": " + describe(action) + ": " + op.what);
        std::string launches = matchLaunches();
        line("    " + fresh(op.result) + " = transform.kforge." + op.op + " " + launches + " {" + op.attribute +
             " = " + std::to_string(action.factor) + "} : " + kUnary);
      }
    for (auto [i, action] : llvm::enumerate(schedule)) {
      if (!actsOnKernel(action))
        continue;
      starts[i] = static_cast<int>(lines.size()) + 1;
      line("    // action " + std::to_string(i) + ": " + describe(action));
      std::string launches = matchLaunches();
      std::string attribute = action.kind == "occupancy"           ? "min_blocks_per_sm = " + std::to_string(action.factor)
                              : action.kind == "max_registers"     ? "max_registers = " + std::to_string(action.factor)
                              : action.kind == "loads_evict_last"  ? "load_l2_policy = \"evict_last\""
                              : action.kind == "loads_evict_first" ? "load_l2_policy = \"evict_first\""
                                                                   : action.kind; // streaming_stores, read_only_inputs
      line("    " + fresh("bounded") + " = transform.kforge.set_kernel_attributes " + launches + " {" + attribute +
           "} : " + kUnary);
    }
    if (actionLines) {
      *actionLines = starts;
      actionLines->push_back(finishStart);
    }
    line("    transform.yield");
    line("  }");
    line("}");
    std::string text;
    for (const std::string &l : lines)
      text += l + "\n";
    return text;
  }

private:
  static inline const std::string kUnary = "(!transform.any_op) -> !transform.any_op";
  static inline const std::string kPair = "(!transform.any_op) -> (!transform.any_op, !transform.any_op)";
  static inline const std::string kFusePair =
      "(!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)";

  void line(const std::string &text) { lines.push_back(text); }
  std::string fresh(StringRef base) { return "%" + base.str() + std::to_string(counter++); }
  std::string matchFunc(StringRef in) {
    return "transform.structured.match ops{[\"func.func\"]} attributes{sym_name = \"" + facts.entry + "\"} in " +
           in.str() + " : " + kUnary;
  }

  /// `split`: the contraction and its producers are not the row kernel's producers; they are marked apart.
  void renderProducerMatchers(bool split) {
    // Ops a fusion may take, and the users that make them producers.
    std::string fusable = split ? "[\"linalg.fill\", \"linalg.generic\"]"
                                : "[\"linalg.fill\", \"linalg.matmul\", \"linalg.batch_matmul\", \"linalg.generic\"]";
    std::string users = split ? "[\"linalg.generic\"]" : "[\"linalg.matmul\", \"linalg.batch_matmul\", \"linalg.generic\"]";
    line("  // A linalg op whose first result feeds another linalg op: a producer that can be fused.");
    line("  transform.named_sequence @match_fusable_producer(%op: !transform.any_op {transform.readonly}) "
         "-> !transform.any_op {");
    line("    transform.match.operation_name %op " + fusable + " : !transform.any_op");
    line("    %user = transform.match.structured failures(propagate) %op : " + kUnary + " {");
    line("    ^bb0(%structured: !transform.any_op):");
    line("      %u = transform.match.structured.result %structured[0] any : " + kUnary);
    line("      transform.match.structured.yield %u : !transform.any_op");
    line("    }");
    line("    transform.match.operation_name %user " + users + " : !transform.any_op");
    line("    transform.yield %op : !transform.any_op");
    line("  }");
    line("  transform.named_sequence @mark_producer(%op: !transform.any_op {transform.readonly}) {");
    line("    transform.annotate %op \"kforge.producer\" : !transform.any_op");
    line("    transform.yield");
    line("  }");
    if (split) {
      line("  // A producer of the contraction (its init's fill): fused into the contraction's kernel.");
      line("  transform.named_sequence @match_contraction_producer(%op: !transform.any_op {transform.readonly}) "
           "-> !transform.any_op {");
      line("    transform.match.operation_name %op [\"linalg.fill\", \"linalg.generic\"] : !transform.any_op");
      line("    %user = transform.match.structured failures(propagate) %op : " + kUnary + " {");
      line("    ^bb0(%structured: !transform.any_op):");
      line("      %u = transform.match.structured.result %structured[0] any : " + kUnary);
      line("      transform.match.structured.yield %u : !transform.any_op");
      line("    }");
      line("    transform.match.operation_name %user [\"linalg.matmul\", \"linalg.batch_matmul\"] : !transform.any_op");
      line("    transform.yield %op : !transform.any_op");
      line("  }");
      line("  transform.named_sequence @mark_contraction_producer(%op: !transform.any_op {transform.readonly}) {");
      line("    transform.annotate %op \"kforge.contraction_producer\" : !transform.any_op");
      line("    transform.yield");
      line("  }");
    }
    // Producers still outside the block loop (directly in the function) or outside the thread loop (directly
    // in the block loop) that have a use: what a second fusion pass takes. The parent is checked first, so
    // ops inside loops never reach the use check.
    for (StringRef level : {"block", "thread"}) {
      line("  transform.named_sequence @match_left_at_" + level.str() +
           "(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {");
      line("    transform.match.operation_name %op [\"linalg.fill\", \"linalg.matmul\", \"linalg.batch_matmul\", "
           "\"linalg.generic\"] : !transform.any_op");
      line("    %parent = transform.get_parent_op %op {nth_parent = 1} : " + kUnary);
      if (level == "block") {
        line("    transform.match.operation_name %parent [\"func.func\"] : !transform.any_op");
      } else {
        line("    transform.match.operation_name %parent [\"scf.forall\"] : !transform.any_op");
        line("    %grandparent = transform.get_parent_op %op {nth_parent = 2} : " + kUnary);
        line("    transform.match.operation_name %grandparent [\"func.func\"] : !transform.any_op");
      }
      line("    transform.match.structured failures(propagate) %op : !transform.any_op {");
      line("    ^bb0(%structured: !transform.any_op):");
      line("      %u = transform.match.structured.result %structured[0] any : " + kUnary);
      line("      transform.match.structured.yield");
      line("    }");
      line("    transform.yield %op : !transform.any_op");
      line("  }");
    }
  }

  /// An scf.forall directly in the function: a kernel's block loop (split: the contraction's, then the rows').
  void renderKernelLoopMatcher() {
    line("  transform.named_sequence @match_kernel_loop(%op: !transform.any_op {transform.readonly}) "
         "-> !transform.any_op {");
    line("    transform.match.operation_name %op [\"scf.forall\"] : !transform.any_op");
    line("    %parent = transform.get_parent_op %op {nth_parent = 1} : " + kUnary);
    line("    transform.match.operation_name %parent [\"func.func\"] : !transform.any_op");
    line("    transform.yield %op : !transform.any_op");
    line("  }");
  }

  /// split_k's second kernel: out[m, n] = sum over the parts of partial[p, m, n], plus the output's fill fused;
  /// blocks of up to 16 x 128 outputs, 4 consecutive outputs per thread (vectorized: the parts are read as
  /// 128-bit vectors).
  void renderPartialsSum() {
    auto largestDividing = [](int64_t extent, std::initializer_list<int64_t> sizes) {
      for (int64_t size : sizes)
        if (extent % size == 0)
          return size;
      return int64_t(1);
    };
    int64_t m = facts.parallelSizes[0], n = facts.parallelSizes[1];
    int64_t bm = largestDividing(m, {16, 8, 4, 2, 1}), bn = largestDividing(n, {128, 64, 32, 16, 8, 4, 2, 1});
    int64_t tn = bn % 4 == 0 ? 4 : 1;
    Action blockTile{"tile", "block", {0, bm, bn}}, blockFuse{"fuse", "block"},
        threadTile{"tile", "thread", {0, 1, tn}}, threadFuse{"fuse", "thread"}, vectorizeAction{"vectorize"};
    Schedule sum = {blockTile, blockFuse, threadTile, threadFuse, vectorizeAction};
    for (const Action &action : sum)
      renderAction(action, sum);
    secondKernelDims = {bn / tn, bm, 1};
  }

  /// split's row kernel, on the root: one row per block over `lanes` lanes, producers fused, the row in
  /// registers (vectorize) when it is at most 128 values per lane (a row sum's elementwise producer, e.g. a
  /// sigmoid, would otherwise go through a stack buffer).
  void renderRowKernel(int64_t lanes) {
    bool rowSum = facts.parallelSizes.size() == 1;
    std::vector<int64_t> oneRow = rowSum ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 0};
    Schedule rows;
    Action blockTile{"tile", "block", oneRow}, blockFuse{"fuse", "block"}, threadTile{"tile", "thread", oneRow},
        threadFuse{"fuse", "thread"}, laneAction{"lanes"};
    laneAction.factor = lanes;
    rows = {blockTile, blockFuse, threadTile, threadFuse, laneAction};
    if (rowWidth(facts) / lanes <= 128)
      rows.push_back(Action{"vectorize"});
    for (const Action &action : rows)
      renderAction(action, rows);
  }

  /// "[#gpu.block<y>, #gpu.block<x>]" for the tiled loops of `sizes` (last tiled loop -> x).
  std::string mapping(llvm::ArrayRef<int64_t> sizes, StringRef kind) {
    static const char *dims[] = {"x", "y", "z"};
    int tiled = static_cast<int>(llvm::count_if(sizes, [](int64_t s) { return s > 0; }));
    std::vector<std::string> items;
    for (int i = tiled - 1; i >= 0; --i)
      items.push_back("#gpu." + kind.str() + "<" + dims[i] + ">");
    return "[" + join(items, ", ") + "]";
  }

  void renderAction(const Action &action, const Schedule &schedule) {
    // Staged mma: the thread tile only sizes the warp grid; the block's matmul is rewritten whole.
    if (findSlot(schedule, "stage") && action.level == "thread" && (action.kind == "tile" || action.kind == "fuse")) {
      line("    // (staged mma: the warp tiles " + std::string(action.kind == "tile" ? "size the warp grid" : "need no loop") +
           ")");
      return;
    }
    if (action.kind == "tile" && action.level != "reduction") {
      std::string tiled = fresh(action.level + "_root"), loop = fresh(action.level + "_loop");
      // With mma, a thread-level tile is a warp's.
      std::string unit = action.level == "block" ? "block" : findSlot(schedule, "mma") ? "warp" : "thread";
      std::string map = gpu ? " (mapping = " + mapping(action.sizes, unit) + ")" : "";
      line("    " + tiled + ", " + loop + " = transform.structured.tile_using_forall " + root + " tile_sizes [" +
           joinInts(action.sizes, ", ") + "]" + map + " : " + kPair);
      root = tiled;
      inner = loop;
      (action.level == "block" ? blockLoop : threadLoop) = loop;
      return;
    }
    if (action.kind == "fuse") {
      std::string loop = action.level == "block" ? blockLoop : threadLoop;
      // Block level: the marked producers of the whole function; thread level: those fused into the block.
      std::string scope = action.level == "block" ? func : blockLoop;
      std::string producers = fresh("producers"), fused = fresh("fused"), newLoop = fresh("loop");
      line("    " + producers + " = transform.structured.match attributes{" + producerAttr + "} in " + scope + " : " +
           kUnary);
      line("    " + fused + ", " + newLoop + " = transform.structured.fuse_into_containing_op " + producers +
           " into " + loop + " : " + kFusePair);
      // A producer used by two fused ops is fused for the first only (upstream fuses each handle entry once):
      // fuse what is still outside the loop and used in it, silently if there is none. Each such pass can leave
      // a producer of the producer behind (gemm+softmax: the matmul feeds max and exp, exp feeds sum and
      // divide), so there is one pass per level of the producer chain.
      int64_t passes = leftoverPasses ? std::clamp<int64_t>(facts.linalgOps - 1, 1, 6) : 0;
      for (int64_t pass = 0; pass < passes; ++pass) {
        std::string left = fresh("left");
        line("    " + left + " = transform.collect_matching @match_left_at_" + action.level + " in " + func + " : " +
             kUnary);
        line("    transform.sequence " + newLoop + " : !transform.any_op failures(suppress) {");
        line("    ^bb0(%containing: !transform.any_op):");
        line("      %more, %more_loop = transform.structured.fuse_into_containing_op " + left + " into %containing : " +
             kFusePair);
        line("    }");
      }
      (action.level == "block" ? blockLoop : threadLoop) = newLoop;
      inner = newLoop;
      return;
    }
    if (action.kind == "tile" && action.level == "reduction") {
      std::string contraction = fresh("contraction"), tiled = fresh("k_tiled");
      kLoop = fresh("k_loop");
      // The contraction's loops: its parallel ones and K (the facts of runs recorded before contraction_sizes
      // existed: a batch_matmul has 4, a matmul 3).
      int loops = !facts.contractionSizes.empty() ? static_cast<int>(facts.contractionSizes.size()) + 1
                  : facts.contractionOp == "linalg.batch_matmul" ? 4
                                                                   : 3;
      std::vector<int64_t> sizes(loops, 0);
      sizes.back() = action.sizes[0];
      line("    " + contraction + " = transform.structured.match ops{[\"" + facts.contractionOp + "\"]} in " + inner +
           " : " + kUnary);
      line("    " + tiled + ", " + kLoop + " = transform.structured.tile_using_for " + contraction + " tile_sizes [" +
           joinInts(sizes, ", ") + "] : " + kPair);
      return;
    }
    if (action.kind == "recompute") {
      std::string recomputed = fresh("recomputed");
      line("    " + recomputed + " = transform.kforge.fuse_elementwise_producers " + threadLoop + " : " + kUnary);
      return;
    }
    if (action.kind == "lane_vector") {
      line("    // (rendered as the vector option of the lanes action's distribute_rows_to_lanes)");
      return;
    }
    if (action.kind == "moments") {
      line("    // (rendered as the moments option of the lanes action's distribute_rows_to_lanes)");
      return;
    }
    if (action.kind == "lanes") {
      // CSE first: fusion may leave a producer twice in the row, and gpu.subgroup_reduce ops are not merged.
      line("    transform.apply_cse to " + func + " : !transform.any_op");
      std::string rows = fresh("row_loop");
      line("    " + rows + " = transform.structured.match ops{[\"scf.forall\"]} attributes{mapping = "
           "[#gpu.thread<x>]} in " + blockLoop + " : " + kUnary);
      std::string lanes = fresh("lane_loop");
      const Action *vector = findSlot(schedule, "lane_vector");
      line("    " + lanes + " = transform.kforge.distribute_rows_to_lanes " + rows + " {lanes = " +
           std::to_string(action.factor) + (vector ? ", vector = " + std::to_string(vector->factor) : "") +
           (findSlot(schedule, "moments") ? ", moments" : "") + "} : " + kUnary);
      threadLoop = inner = lanes; // the thread loop is replaced (its other handles are gone)
      return;
    }
    if (action.kind == "unroll") {
      line("    transform.loop.unroll " + kLoop + " {factor = " + std::to_string(action.factor) +
           "} : !transform.any_op");
      return;
    }
    if (action.kind == "vectorize") {
      // Unit dims first (a 1xN thread tile): vector patterns on vector<1xN> ops can rewrite each other forever
      // (seen as an out-of-memory abort). Then matched and vectorized before any cleanup pattern can replace
      // the loop the handle points to.
      // (A named batch_matmul keeps its unit batch dim; its generic form lets the dim be folded away.)
      renderFoldUnitDims(facts.contractionOp == "linalg.batch_matmul" ? "\"linalg.batch_matmul\"" : "", inner);
      std::string ops = fresh("tile_ops");
      line("    " + ops + " = transform.structured.match interface{LinalgOp} in " + inner + " : " + kUnary);
      line("    transform.structured.vectorize " + ops + " : !transform.any_op");
      std::string canon = fresh("func");
      line("    " + canon + " = " + matchFunc("%module"));
      line("    transform.apply_patterns to " + canon + " {");
      line("      transform.apply_patterns.vector.reduction_to_contract");
      line("      transform.apply_patterns.vector.transfer_permutation_patterns");
      line("      transform.apply_patterns.canonicalization");
      line("    } : !transform.any_op");
      line("    transform.apply_cse to " + canon + " : !transform.any_op");
      vectorized = true;
      return;
    }
  }

  /// A handle to the bufferized payload's gpu.launch ops (for the actions applied to the kernel after the
  /// finish: row prefetches, launch bounds).
  std::string matchLaunches() {
    std::string launches = fresh("launches");
    line("    " + launches + " = transform.structured.match ops{[\"gpu.launch\"]} in %bufferized : " + kUnary);
    return launches;
  }

  /// The ops named `opNames` (a quoted, comma-separated list; none: skip) in `in` in their generic form, then
  /// every generic's unit dims folded away (rank-reducing slices).
  void renderFoldUnitDims(const std::string &opNames, const std::string &in) {
    if (!opNames.empty()) {
      std::string named = fresh("named_ops");
      line("    " + named + " = transform.structured.match ops{[" + opNames + "]} in " + in + " : " + kUnary);
      line("    " + fresh("generic") + " = transform.structured.generalize " + named + " : " + kUnary);
    }
    std::string unitFunc = fresh("func");
    line("    " + unitFunc + " = " + matchFunc("%module"));
    line("    transform.apply_patterns to " + unitFunc + " {");
    line("      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices");
    line("    } : !transform.any_op");
  }

  /// A batch_matmul's block (one batch) as a matmul: the block's batch_matmul and fill in their generic form,
  /// the unit batch folded away, then every generic that specialize can name is named (the matmul, the fill;
  /// failures suppressed), and the elementwise ones among them made generic again, since the staged ops take
  /// their epilogue as linalg.generic. They then see a linalg.matmul, its fill and its epilogue as for a gemm.
  void renderFoldUnitBatch() {
    line("    // the block's unit batch folded away: its batch_matmul becomes a matmul");
    renderFoldUnitDims("\"linalg.batch_matmul\", \"linalg.fill\"", blockLoop);
    std::string generics = fresh("generics");
    line("    " + generics + " = transform.structured.match ops{[\"linalg.generic\"]} in " + blockLoop + " : " +
         kUnary);
    line("    transform.foreach " + generics + " : !transform.any_op {");
    line("    ^bb0(%one: !transform.any_op):");
    line("      transform.sequence %one : !transform.any_op failures(suppress) {");
    line("      ^bb1(%each: !transform.any_op):");
    line("        %named = transform.structured.specialize %each : " + kUnary);
    line("      }");
    line("    }");
    // specialize also names elementwise epilogues (a residual add becomes linalg.add); the staged ops take an
    // epilogue as linalg.generic, so those are generic again.
    std::string elementwise = fresh("elementwise");
    line("    " + elementwise + " = transform.structured.match ops{[" + kSpecializedElementwise + "]} in " +
         blockLoop + " : " + kUnary);
    line("    " + fresh("generic") + " = transform.structured.generalize " + elementwise + " : " + kUnary);
  }
  /// The named ops transform.structured.specialize may turn an elementwise linalg.generic into (MLIR 22).
  static constexpr const char *kSpecializedElementwise =
      "\"linalg.copy\", \"linalg.exp\", \"linalg.log\", \"linalg.abs\", \"linalg.ceil\", \"linalg.floor\", "
      "\"linalg.negf\", \"linalg.reciprocal\", \"linalg.round\", \"linalg.sqrt\", \"linalg.rsqrt\", "
      "\"linalg.square\", \"linalg.tanh\", \"linalg.erf\", \"linalg.add\", \"linalg.sub\", \"linalg.mul\", "
      "\"linalg.div\", \"linalg.div_unsigned\", \"linalg.max\", \"linalg.min\", \"linalg.powf\", "
      "\"linalg.select\", \"linalg.transpose\", \"linalg.broadcast\", \"linalg.elementwise\", \"linalg.map\"";

  void renderFinish(const Schedule &schedule) {
    // Producers fused into loops leave their originals dead: erase them while they are tensors (after
    // bufferization they write memory and stay, on the host).
    line("    %tfunc = " + matchFunc("%module"));
    line("    transform.apply_patterns to %tfunc {");
    line("      transform.apply_patterns.canonicalization");
    line("    } : !transform.any_op");
    line("    transform.apply_cse to %tfunc : !transform.any_op");
    line("    %bufferized = transform.bufferization.one_shot_bufferize %module");
    line("        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32} : " +
         kUnary);
    line("    %bfunc = " + matchFunc("%bufferized"));
    line("    transform.apply_patterns to %bfunc {");
    line("      transform.apply_patterns.canonicalization");
    // split_k's partial matmul reads its operands through memref.expand_shape views of the arguments, on
    // which upstream's alias folding does not terminate (seen with MLIR 22); the lowering folds them later.
    if (!splitKSchedule)
      line("      transform.apply_patterns.memref.fold_memref_alias_ops");
    line("    } : !transform.any_op");
    line("    transform.apply_cse to %bfunc : !transform.any_op");
    if (gpu && !secondKernelDims.empty()) {
      // Two kernels, in program order: the contraction's (split_k: the partial matmul's), then the rows' (the
      // partials' sum).
      std::vector<int64_t> dims = blockDims(schedule, facts);
      line("    %kernel_loops = transform.collect_matching @match_kernel_loop in %bfunc : " + kUnary);
      line("    %first_kernel, %second_kernel = transform.split_handle %kernel_loops : "
           "(!transform.any_op) -> (!transform.any_op, !transform.any_op)");
      line("    %launch = transform.gpu.map_forall_to_blocks %first_kernel generate_gpu_launch : " + kUnary);
      line("    transform.gpu.map_nested_forall_to_threads %launch block_dims = [" + joinInts(dims, ", ") + "] : " +
           kUnary);
      line("    %second_launch = transform.gpu.map_forall_to_blocks %second_kernel generate_gpu_launch : " + kUnary);
      line("    transform.gpu.map_nested_forall_to_threads %second_launch block_dims = [" +
           joinInts(secondKernelDims, ", ") + "] : " + kUnary);
      line("    %mfunc = " + matchFunc("%bufferized"));
      line("    transform.apply_patterns to %mfunc {");
      if (!splitKSchedule)
        line("      transform.apply_patterns.memref.fold_memref_alias_ops");
      line("      transform.apply_patterns.canonicalization");
      line("    } : !transform.any_op");
    } else if (gpu) {
      std::vector<int64_t> dims = blockDims(schedule, facts);
      line("    %launch = transform.gpu.map_forall_to_blocks %bfunc generate_gpu_launch : " + kUnary);
      line("    transform.gpu.map_nested_forall_to_threads %launch block_dims = [" + joinInts(dims, ", ") + "] : " +
           kUnary);
      line("    %mfunc = " + matchFunc("%bufferized"));
      line("    transform.apply_patterns to %mfunc {");
      line("      transform.apply_patterns.memref.fold_memref_alias_ops");
      line("      transform.apply_patterns.canonicalization");
      line("    } : !transform.any_op");
    }
    if (!vectorized)
      return;
    line("    %vfunc = " + matchFunc("%bufferized"));
    line("    %hoisted = transform.structured.hoist_redundant_vector_transfers %vfunc : " + kUnary);
    line("    transform.apply_patterns to %hoisted {");
    line("      transform.apply_patterns.vector.lower_contraction lowering_strategy = \"outerproduct\"");
    line("      transform.apply_patterns.vector.lower_outerproduct");
    line("      transform.apply_patterns.vector.transfer_permutation_patterns");
    line("      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1");
    line("      transform.apply_patterns.vector.lower_broadcast");
    line("      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = \"innerreduction\"");
    line("      transform.apply_patterns.vector.lower_transpose");
    line("      transform.apply_patterns.vector.lower_shape_cast");
    line("      transform.apply_patterns.canonicalization");
    line("    } : !transform.any_op");
    line("    transform.apply_cse to %hoisted : !transform.any_op");
  }

  PayloadFacts facts; ///< The root's; after split's row kernel, the contraction's.
  bool gpu;
  std::vector<std::string> lines;
  int counter = 0;
  std::string root, func, inner, blockLoop, threadLoop, kLoop;
  std::string producerAttr = "kforge.producer"; ///< What fuse fuses: the marked producers.
  bool leftoverPasses = true;                   ///< fuse's extra passes for producers used twice.
  bool vectorized = false;                      ///< Some fragment vectorized: the finish lowers vectors.
  std::vector<int64_t> secondKernelDims;        ///< split / split_k: the second kernel's block.
  bool splitKSchedule = false;                  ///< The schedule starts with split_k.
};
} // namespace

std::string kforge::tune::renderSchedule(const Schedule &schedule, const PayloadFacts &facts, StringRef target,
                                         std::vector<int> *actionLines) {
  return Renderer(facts, target).render(schedule, actionLines);
}

int kforge::tune::actionAtLine(llvm::ArrayRef<int> actionLines, int line, int totalActions) {
  // The fragment starting last at or before `line`; entry totalActions is the finish. Launch bounds are
  // rendered after the finish, so their starts come after its start.
  int found = -1, foundStart = 0;
  for (int i = 0; i < static_cast<int>(actionLines.size()) && i <= totalActions; ++i)
    if (actionLines[i] > 0 && actionLines[i] <= line && actionLines[i] >= foundStart) {
      found = i;
      foundStart = actionLines[i];
    }
  return found == totalActions ? -1 : found;
}

std::string kforge::tune::describe(const Action &action) {
  if (action.kind == "tile")
    return "tile(" + action.level + ", " + joinInts(action.sizes, "x") + ")";
  if (action.kind == "fuse")
    return "fuse(" + action.level + ")";
  // unroll, lanes, split, split_k, mma, occupancy, max_registers: their one integer parameter.
  if (const ActionSpec *spec = findAction(action.kind);
      spec && spec->params.size() == 1 && spec->params[0].type == ParamType::Int)
    return action.kind + "(" + std::to_string(action.factor) + ")";
  return action.kind;
}

std::string kforge::tune::describe(const Schedule &schedule) {
  if (schedule.empty())
    return "(none)";
  std::vector<std::string> items;
  for (const Action &action : schedule)
    items.push_back(describe(action));
  return join(items, "; ");
}

std::string kforge::tune::scheduleHash(const Schedule &schedule) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toJSON(schedule);
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(text));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string kforge::tune::actionsMarkdown() {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "# Actions\n\n"
     << "<!-- Generated from kforge's action registry by `kforge-tune --actions-doc`; a test fails when this\n"
     << "     file and the registry disagree. Edit lib/Tune/Actions.cpp, then regenerate. -->\n\n"
     << "A schedule is an ordered list of actions, each a JSON object `{\"kind\": ..., \"params\": {...}}`, e.g.\n\n"
     << "    [{\"kind\": \"tile\", \"params\": {\"level\": \"block\", \"sizes\": [64, 64]}},\n"
     << "     {\"kind\": \"fuse\", \"params\": {\"into\": \"block\"}}]\n\n"
     << "Each action renders to a fragment of one transform-dialect named sequence (`kforge-tune --render`). "
     << "Every schedule ends with the target's finish, which is not an action: one-shot bufferization; on the "
     << "GPU, mapping the block loop to the grid and the thread loop to the block (the block's size follows "
     << "from the block and thread tiles); lowering of vector ops.\n\n"
     << "Order: each slot (kind and level) appears at most once, in this order: split, split_k, tile(block), "
     << "fuse(block), tile(thread), fuse(thread), recompute, lanes, lane_vector, moments, mma, stage, ldmatrix, "
     << "pipeline, wgmma, tma, overlap, stage_epilogue, tile(reduction), unroll, vectorize, prefetch_rows, "
     << "pipeline_rows, stash, occupancy, max_registers, streaming_stores, read_only_inputs, loads_evict_last, "
     << "loads_evict_first (the last six act on "
     << "the kernel the GPU mapping makes).\n\n"
     << "The root is the op that produces the entry's returned value; block and thread tiles cut its parallel "
     << "loops (one size per loop, 0 = whole loop). After split, the actions schedule the contraction instead "
     << "(the root is then the contraction), and the ops after it get a row kernel of their own.\n\n";
  for (const ActionSpec &spec : actionRegistry()) {
    os << "## " << spec.kind << "\n\n" << spec.summary << "\n\n";
    os << "- renders to: " << spec.renders << "\n";
    os << "- targets: " << join(spec.targets, ", ") << "\n";
    os << "- requires: " << spec.requires_ << "\n";
    if (spec.params.empty())
      os << "- parameters: none\n";
    for (const ParamSpec &param : spec.params) {
      os << "- `" << param.name << "`: " << param.doc << "; ";
      if (param.type == ParamType::Enum)
        os << "one of " << join(param.choices, ", ");
      else if (param.type == ParamType::Int)
        os << "one of " << joinInts(param.values, ", ");
      else
        os << "a list; each element one of " << joinInts(param.values, ", ");
      os << "\n";
    }
    os << "\n";
  }
  os << "## Not yet in the registry\n\n"
     << "Promotion to shared memory, software pipelining, loop interchange, warp-level tiles and tensor-core "
     << "rewriting exist only as hand-written recipes (recipes/matmul_shared_memory.mlir) or not at all; they "
     << "join the registry with the micro passes of issues 7 and 8.\n";
  return out;
}
