//===- KforgeTransformOps.td - transform.kforge.* ops ------*- tablegen -*-===//
//
// kforge's own transform ops, for steps upstream MLIR has no op for. They live in one
// extension of the transform dialect, registered by registerKforgeTransformExtension.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS
#define KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Dialect/Transform/IR/TransformTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

// Memory effects of an op that rewrites its target in place (or inside it) and returns it: it only reads its
// handle (KforgeTransformOpTraits.h).
def Kforge_InPlaceTransformOpTrait : NativeOpTrait<"InPlaceTransformOpTrait"> {
  let cppNamespace = "::kforge::transform";
}

// An op that acts on each payload op of its one operand, `$target` (TransformEachOpTrait): its `applyToOne`
// takes the payload op as `targetType`. With `wrongTarget` set, a payload op of another kind fails
// silenceably with that message (kforge::transform::applyToEach), where upstream's trait would say
// "transform applied to the wrong op kind".
class Kforge_EachOp<string mnemonic, string targetType, string wrongTarget, list<Trait> traits>
    : Op<Transform_Dialect, "kforge." # mnemonic,
         !listconcat(traits, [MemoryEffectsOpInterface, TransformEachOpTrait, TransformOpInterface,
                              ReportTrackingListenerFailuresOpTrait])> {
  let assemblyFormat = "$target attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    ::mlir::DiagnosedSilenceableFailure applyToOne(
        ::mlir::transform::TransformRewriter &rewriter, }] # targetType # [{ target,
        ::mlir::transform::ApplyToEachResultList &results, ::mlir::transform::TransformState &state);
  }] # !if(!empty(wrongTarget), "", [{
    /// TransformEachOpTrait's apply, with this op's own message for a target of another kind.
    ::mlir::DiagnosedSilenceableFailure apply(::mlir::transform::TransformRewriter &rewriter,
                                              ::mlir::transform::TransformResults &results,
                                              ::mlir::transform::TransformState &state) {
      return ::kforge::transform::applyToEach(*this, "}] # wrongTarget # [{", rewriter, results, state);
    }
  }]);
}

// Rewrites its target in place and returns it: reads the handle, which stays valid.
class Kforge_InPlaceOp<string mnemonic, string targetType, string wrongTarget, list<Trait> traits = []>
    : Kforge_EachOp<mnemonic, targetType, wrongTarget, !listconcat(traits, [Kforge_InPlaceTransformOpTrait])>;

// Replaces its target (or erases it): consumes the handle.
class Kforge_ReplacingOp<string mnemonic, string targetType, string wrongTarget, list<Trait> traits = []>
    : Kforge_EachOp<mnemonic, targetType, wrongTarget, !listconcat(traits, [FunctionalStyleTransformOpTrait])>;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

def OutsToEmptyOp : Kforge_InPlaceOp<"outs_to_empty", "::mlir::linalg::LinalgOp", "expected a linalg op on tensors"> {
  let summary = "Give a linalg op fresh tensor.empty outputs where it never reads them";
  let description = [{
    For each tensor output (`outs` operand) of the target linalg op whose value the
    op's body never reads (an elementwise op that overwrites its output), replaces the
    operand with a new `tensor.empty` of the same type.

    Why: importers and CSE often make several ops write into the same `tensor.empty`,
    so after tile-and-fuse an intermediate op may write into a slice of the kernel's
    output. Promoting such an intermediate to shared memory then copies the output
    slice in first, and that block-wide copy races with the threads' writes. With an
    empty destination no copy is needed.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target op is not a
    linalg op with tensor semantics. Succeeds (possibly changing nothing) otherwise.
    Only reads the target handle; returns a handle to the updated op, which is modified
    in place.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs TransformHandleTypeInterface:$transformed);
}

def NameMatmulOp : Kforge_ReplacingOp<"name_matmul", "::mlir::linalg::GenericOp", "expected a linalg.generic"> {
  let summary = "Rewrite a linalg.generic that is a matmul as linalg.matmul, keeping its operand layouts";
  let description = [{
    Replaces each targeted `linalg.generic` that computes a matmul (loops (m, n, k):
    parallel, parallel, reduction; A read as (m, k) or (k, m), B as (k, n) or (n, k), C
    written as (m, n); body `out + a * b`, the operands possibly extended to the result
    type) with a `linalg.matmul` carrying the same indexing maps, and returns handles to
    the new ops.

    Why: `transform.structured.specialize` in MLIR 22 names such a generic a matmul with
    the default maps even when an operand is transposed: a batch_matmul block of
    attention's Q x K^T, folded to a matmul, became an invalid op (or, for square tiles, a
    valid one computing Q x K). kforge's staged rewrites read the maps.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not such a
    generic. Consumes the target handle.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs TransformHandleTypeInterface:$transformed);
}

def MatmulTransposeBOp : Kforge_ReplacingOp<"matmul_transpose_b", "::mlir::linalg::MatmulOp", "expected a linalg.matmul on tensors"> {
  let summary = "Read a matmul's B (K x N) from a transposed copy (N x K)";
  let description = [{
    Targets a `linalg.matmul` on statically shaped tensors that reads A as (m, k) and B
    as (k, n) (the default maps). Inserts a `linalg.transpose` of B into a new N x K
    tensor and replaces the matmul with one reading A as (m, k) and the copy as (n, k)
    (nn.Linear's layout), its discardable attributes kept. Returns the new matmul and
    the transpose, which the schedule maps to a kernel of its own.

    Why: TF32 wgmma reads both operands from shared memory K-major only, so a plain
    fp32 A @ B could use TF32 tensor cores on Hopper only through mma.sync's form
    (0.43x of cuBLAS TF32 on an H100, its B fragments read element by element). The
    copy costs one read and one write of B; the matmul then takes the Linear's forms.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, when the target is not on
    statically shaped tensors or does not read A as (m, k) and B as (k, n). Consumes the
    target handle.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs TransformHandleTypeInterface:$transformed, TransformHandleTypeInterface:$transpose);
}

def CopyToLinalgOp : Kforge_ReplacingOp<"copy_to_linalg", "::mlir::memref::CopyOp", "expected a memref.copy between ranked memrefs"> {
  let summary = "Rewrite a memref.copy as an equivalent linalg.copy";
  let description = [{
    Replaces each targeted `memref.copy` between ranked memrefs with a `linalg.copy`
    of the same operands and returns handles to the new ops. Upstream promotion
    (`transform.structured.promote`) emits `memref.copy`, which cannot be tiled;
    `linalg.copy` implements TilingInterface, so the copy can then be split over
    threads (cooperative copies into shared memory).

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not a
    `memref.copy` between ranked memrefs. Consumes the target handle.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs TransformHandleTypeInterface:$transformed);
}

def ConvChannelsLastOp : Kforge_ReplacingOp<"conv_channels_last", "::mlir::linalg::LinalgOp", "expected a linalg op on tensors"> {
  let summary = "Read one multiplicand of a convolution from a copy with its channels innermost";
  let description = [{
    Targets a linalg op on tensors whose body is `out + x * y` (a convolution, named or the
    guarded generic a padded one becomes in `kforge-normalize-importer`), `multiplicand`
    naming x (0) or y (1). Its channel loop is a reduction loop that both multiplicands index
    a whole dimension of their tensors by (a convolution's input channels), the longest if
    several. The named multiplicand's tensor is collapsed to [outer, C, inner] (or [C,
    inner]), transposed by a `linalg.transpose` to [outer, inner, C] and expanded back with
    the channel dimension moved last (NCHW to NHWC, FCHW to FHWC: PyTorch's channels_last),
    and the op reads that copy, its indexing map (or the `tensor.extract` of a padded input)
    permuted alike. A named op becomes its generic form first (its discardable attributes
    kept). Returns the op and the transpose, which the schedule maps to a kernel of its own.

    Why: an NCHW convolution's K (its channels) is the outer dimension of both its input and
    its FCHW filter, so its implicit GEMM copies K tiles element by element, and on tensor
    cores those copies bound it (session 57, H100: NCHW bf16 at 0.47-0.61x cuDNN, NHWC at
    0.88x). cuDNN transposes NCHW for its tensor cores too.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, when the target is not on
    tensors, its body is not `out + x * y` of element reads of statically shaped tensors of
    rank 2 or more, it has no channel loop, or the named multiplicand has its channels
    innermost already. Consumes the target handle. The op fails to verify when `multiplicand`
    is not 0 or 1.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target, I64Attr:$multiplicand);
  let results = (outs TransformHandleTypeInterface:$transformed, TransformHandleTypeInterface:$transpose);
  let hasVerifier = 1;
}

def SetKernelAttributesOp : Kforge_InPlaceOp<"set_kernel_attributes", "::mlir::gpu::LaunchOp", "expected a gpu.launch"> {
  let summary = "Ask for register and occupancy limits, streaming stores, read-only input loads or an L2 load policy on the kernel a gpu.launch becomes";
  let description = [{
    Records on each targeted `gpu.launch` how its kernel should be compiled:
    `min_blocks_per_sm` (PTX `.minnctapersm`: the compiler limits registers so that
    many blocks fit on a multiprocessor), `max_registers` (PTX `.maxnreg`) and/or
    `streaming_stores` (every global store with the evict-first cache operator `.cs`:
    output written once, never read back, so L2 lets it go first) and/or
    `read_only_inputs` (loads from the buffers the kernel only reads through the
    non-coherent read-only path, `ld.global.nc`) and/or `load_l2_policy` (`"evict_first"` or
    `"evict_last"`: every load from the kernel's buffers carries that L2 cache policy,
    `createpolicy.fractional` + `ld.global.L2::cache_hint`). The attributes survive outlining
    through kforge's lowering pipeline (`kforge-prepare-kernel-attributes` /
    `kforge-apply-kernel-attributes`), which puts them on the outlined kernel as
    `nvvm.minctasm` / `nvvm.maxnreg` / `kforge.streaming_stores` /
    `kforge.read_only_inputs` / `kforge.load_l2_policy`; `kforge-streaming-stores` then has
    ptxas assemble that kernel's module with `-dscm=cs`, `kforge-invariant-input-loads` marks
    the loads from its read-only arguments invariant, and `kforge-l2-load-policy` writes its
    global loads with the cache policy. Register pressure is the largest single lever
    recorded for SIMT matmul in shared/TOOLCHAIN.md; stores written evict-first took 1.6-5%
    off row normalisations on the H200 (docs/perf/reductions-h200.md).

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not a
    `gpu.launch`. The op fails to verify when nothing is asked for, a limit is not
    positive (max_registers must be at most 255) or load_l2_policy is neither
    "evict_first" nor "evict_last". Only reads the target handle.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       OptionalAttr<I64Attr>:$min_blocks_per_sm,
                       OptionalAttr<I64Attr>:$max_registers,
                       UnitAttr:$streaming_stores,
                       UnitAttr:$read_only_inputs,
                       OptionalAttr<StrAttr>:$load_l2_policy);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let hasVerifier = 1;
}

def FuseElementwiseProducersOp : Kforge_InPlaceOp<"fuse_elementwise_producers", "::mlir::Operation *", ""> {
  let summary = "Recompute elementwise producers in each of their consumers instead of storing them";
  let description = [{
    Inside the target op (a loop), fuses every elementwise `linalg.generic` (all loops
    parallel, one result) into each `linalg.generic` that consumes its result, using
    upstream's elementwise fusion (`linalg::fuseElementwiseOps`): the consumer computes the
    producer's value itself from the producer's inputs. A producer with several consumers
    is fused into each of them (its work is repeated) and erased once nothing uses it;
    results the fused ops no longer need are dropped. Repeats until no producer is left.

    Why: a row softmax's exp(x - max) is read by the row sum and by the division. Kept as a
    tensor, a thread holding a slice of a wide row must store it (registers, or a stack
    frame in local memory when it is too large for them). Recomputed in both consumers,
    nothing but the row's statistics is kept: each pass re-reads x (from L2 after the
    first), and the kernel needs few registers, so many rows are in flight.

    #### Return modes

    Succeeds and returns the target (the same op, its body rewritten), also when there is
    nothing to fuse. Fails definitely only if upstream's fusion misbehaves (refuses a pair it
    reported fusable, or never finishes). Only reads the target handle.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs TransformHandleTypeInterface:$transformed);
}

def DistributeRowsToLanesOp : Kforge_ReplacingOp<"distribute_rows_to_lanes", "::mlir::scf::ForallOp", "expected an scf.forall with one induction variable from 0, step 1"> {
  let summary = "Spread each thread's row program over `lanes` lanes: cyclic columns, shuffle reductions";
  let description = [{
    Targets a thread-level `scf.forall` over rows (one induction variable, one row per
    iteration) whose body computes a row of width N: linalg ops over a row (their last loop
    has N iterations; the others one), row statistics (reductions over the row), and
    `tensor.parallel_insert_slice`s of 1xN rows or of row statistics (a row sum as the
    result: lane 0 inserts it, the other lanes an empty slice). Each lane's partial
    accumulates in a tensor of its own. Returns a forall over (rows, lanes),
    mapped to `#gpu.thread<y>` and `#gpu.thread<x>`, in which lane `l` handles the columns
    `l, l + lanes, l + 2 lanes, ...`: every row op works on a strided 1x(N/lanes) slice
    (one warp-wide access reads `lanes` consecutive elements: coalesced), and every
    reduction over the row becomes a partial reduction per lane followed by a
    `gpu.subgroup_reduce` over the lanes (butterfly shuffles after
    `kforge-lower-subgroup-reduce`), whose result every lane holds. A reduction must start
    from its combiner's neutral element (a `linalg.fill` with it), so that partials combine
    exactly. With `lanes` = 32 a row is one warp; 2 to 16 (powers of 2) put several rows in a
    warp. With a multiple of 32 from 64 to 1024 lanes (not only powers of 2: 800 lanes take 40
    columns each of a 32000-wide row) a row spans several warps, and its reductions are `gpu.all_reduce`s over the
    block (uniform: shuffles within each warp, then shared memory across the warps, by
    upstream's lowering in `kforge-lower-subgroup-reduce`): the forall must then have one row,
    so that the block is that row's lanes and nothing else.

    With `vector` = V (2 or 4; default 1), lane `l` owns V consecutive columns out of every
    V x `lanes`: `l V + j + k V lanes` for j < V, so its accesses are V-element (with 4
    fp32 elements 16-byte) vectors and a warp-wide access still reads consecutive memory.
    Each row op is cloned once per j, on the strided slice of column offset `l V + j` and
    stride `V lanes`; a reduction's V partials are combined in the lane before the lanes
    combine theirs. The slices' scalar accesses are adjacent in memory, so the LLVM backend
    merges them into vector loads and stores where the row's alignment allows.
    N must be a multiple of V x `lanes`.

    With `moments`, a row's sum S = sum(x) and its centred sum of squares Q = sum((x - S / N)^2)
    (layernorm's mean and variance, `kforge::matchRowMoments`) are combined over the lanes in one
    round instead of two dependent ones: each lane sums its columns (s) and their squared
    deviations from its own mean (q), and the lanes merge (s, q) pairs by Chan et al.'s pairwise
    update (equal counts n on both sides: q = q_a + q_b + ((s_b - s_a) / n)^2 n / 2), by
    shuffles within each warp and, beyond a warp, through two workgroup buffers of one value per
    warp and one barrier (the warps must then be a power of 2). The centring and everything after
    it are computed as written; the squares are not (only Q used them).

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, when the target is not such a
    forall: not one induction variable from 0 with step 1, N not a multiple of `lanes`, an
    op in the body that uses a row value but is not a row op, more than one row with more
    than 32 lanes, a row op with more than one
    row, a reduction without a neutral-element fill or with a combiner `gpu.subgroup_reduce`
    has no kind for, or an insert that is not a whole unit-stride row; with `moments`, when the
    row program has no such sum and centred sum of squares. Consumes the target handle.

    The op fails to verify when `lanes` is not a power of 2 from 2 to 32 or a multiple of 32
    up to 1024, `vector` is not 1, 2 or 4, or, with `moments`, a row spans a number of warps
    that is not a power of 2.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       DefaultValuedAttr<I64Attr, "32">:$lanes,
                       DefaultValuedAttr<I64Attr, "1">:$vector,
                       UnitAttr:$moments);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let hasVerifier = 1;
}

def MatmulToMmaSyncOp : Kforge_ReplacingOp<"matmul_to_mma_sync", "::mlir::linalg::MatmulOp", "expected a linalg.matmul on memrefs"> {
  let summary = "Compute a warp's matmul tile with tensor-core mma.sync or wgmma (bf16/f16 operands, or f32 as TF32 on wgmma; f32 accumulators)";
  let description = [{
    Targets a bufferized `linalg.matmul` that one warp computes (inside a loop mapped to
    `#gpu.warp`, or already distributed to a warp's lanes): A (MxK) and B (KxN) in bf16
    or f16, C (MxN) in f32, static shapes with M a multiple of 16, N of 8 and K of 16,
    and A's rows contiguous. It is replaced by lane-level code for PTX's
    `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}`: `gpu.lane_id` picks each lane's
    fragment elements (the layout PTX specifies: lane l holds rows l/4 and l/4 + 8 and
    columns 2(l%4), 2(l%4)+1 of each tile), a loop over K in steps of 16 carries the
    (M/16)x(N/8) accumulator fragments in registers, and `nvvm.mma.sync` multiplies. A's
    pairs are read as 32-bit loads; B's elements one at a time. With `k_steps` > 1 each
    iteration of the K loop covers that many steps of 16, all their fragments loaded before
    the first multiply (more loads in flight per warp; more registers).

    The `linalg.fill` that initialises C just before the matmul (same block, C its only
    output) becomes the accumulators' initial value; without one, C is read first. When the
    only other user of C is the next op, an all-parallel `linalg.generic` reading C through
    an identity map (an epilogue: bias, activation, rounding to bf16) and C is a
    `memref.alloc` used by nothing else, the epilogue is applied to the accumulators in
    registers: its body is cloned per element, its other inputs are read through their
    indexing maps, and it stores into its own output; C's buffer, the fill and the
    epilogue are erased. Otherwise the accumulators are stored into C.

    Staged (`block_k` > 0, with `warp_grid = [rows, columns]`): the matmul is a block's tile
    in a `gpu.launch` of 32 x rows x columns threads along x, and warp w computes the tile at
    (w / columns, w % columns) of the grid. The K loop walks tiles of `block_k`: the block's
    threads copy A's (M x block_k) and B's (block_k x N) tile into shared memory together
    (8-element vectors, consecutive threads on consecutive 16 bytes), both as they are in
    global memory; rows padded by 8 elements (16 bytes), so the rows a warp's fragment reads
    touch fall in different banks and every row stays 16-byte aligned. Two stages: while the warps multiply one, each thread's
    share of the next tile is loaded into registers and then stored into the other; one
    barrier per tile. The buffers are workgroup attributions of the launch (at most 48 KB).
    With `ldmatrix`, the warps read their fragments from shared memory with ldmatrix (four
    8x8 matrices per instruction: one per A tile row and one, transposed, per two B tile
    columns per step of 16) instead of 32-bit loads of A and 16-bit loads of B.

    With `async_stages` = S (at least 2; staged only), the tiles are copied by asynchronous
    copies (`cp.async`, 16 bytes each, no registers) into S stages: S - 1 tiles are in
    flight before the loop; in iteration t each thread waits until its copies of tile t
    have landed, the block meets at a barrier (tile t is visible, and every warp is done
    with tile t - 1), the copies of tile t + S - 1 are issued into tile t - 1's stage, and
    the warps multiply tile t. Stages above 48 KB in all are dynamic shared memory (at
    most 227 KB).

    With `wgmma` (sm_90a; with `async_stages`, `block_k` = 64, no `ldmatrix`, and a warp
    grid of 4 x G warps by 1 over 16-row warp tiles), each warpgroup of 4 warps multiplies
    its 64 rows by the tile's N columns (a multiple of 64, at most 256) with
    `wgmma.mma_async` m64nNk16 on shared-memory descriptors: the stages are 128-byte
    swizzled (16-byte chunk c of row r stored at c ^ (r % 8)), A K-major, B N-major in
    atoms of 64 columns read transposed by the instruction. The copies are fenced for the
    async proxy before the barrier; each tile is 4 wgmma, committed and waited for. The
    accumulators stay in registers in mma.sync's fragment order, so the epilogue is the
    same.

    With `tma` (with `wgmma`), the stages are filled by the tensor memory accelerator
    instead of cp.async: before the launch the host builds a tensor map of A's and of B's
    global memref (a call to the runtime's `kforge_tensor_map_2d`, which encodes it with
    cuTensorMapEncodeTiled, 128-byte swizzled, and keeps it in device memory); in the
    kernel thread 0 initialises one mbarrier per stage, and for each tile tells the stage's
    mbarrier the bytes to expect and issues `cp.async.bulk.tensor.2d` copies (A's box, one
    box per 64-column atom of B) that complete on it. Iteration t waits on its stage's
    mbarrier (phase parity t / S), meets the block at a barrier, and thread 0 issues tile
    t + S - 1 into tile t - 1's stage while there is one.

    With `warp_specialized` (with `tma`), the block has one more warp than the grid: a
    producer warp whose first thread issues every tile's TMA copies, while the grid's warps
    (the consumers) only wait and multiply. Each stage has two mbarriers: full (the copies
    landed: the producer's expected bytes, as with `tma`) and empty (every consumer warp is
    done with it: one arrival per warp once the tile's wgmma finished, so after the next
    tile's with `wgmma_in_flight` = 1). The producer waits on a stage's empty mbarrier before
    filling it again (the first round passes at once: phase parity 1 of a fresh mbarrier),
    so copies run up to S tiles ahead and the consumers never meet at a block barrier in the
    K loop; the epilogue runs on the consumers alone (with `stage_epilogue`, its barriers are
    named barrier 1 over the consumers' threads). The matmul must be in a gpu.launch of the
    grid's threads plus 32.

    With `persistent_blocks` = P (with `warp_specialized`, without `stage_epilogue`), the
    launch's gx x gy blocks of one tile each (static grid sizes, gz = 1) become min(P, gx x gy)
    blocks that each loop over tiles b, b + P, ... (tile i at block (i % gx, i / gx)): the
    launch's body moves into that loop, the mbarriers are initialised once before it, and
    the stages and phases run on across tiles (tile t of round r is the (r x tiles + t)-th),
    so the producer fills the next tile's stages while the consumers apply and store this
    tile's epilogue. P is the blocks resident at once (one per multiprocessor for a block
    that takes one).

    With `cluster_multicast` = "a" or "b" (with `warp_specialized`, without
    `persistent_blocks`), blocks run in clusters of two that share that operand's tile: the
    pair's blocks differ along the one grid dimension the shared operand's tile offsets do
    not depend on (its launch size static and even; the launch gets clusters of 2 along it),
    and each block's producer copies half of the shared tile (half its boxes, or a box of half
    its rows) into the same stage of both blocks by TMA multicast, completing on each block's
    full mbarrier, which still expects the whole stage. A stage is refilled only when the
    consumers of both blocks are done with it: each consumer warp arrives on its own block's
    empty mbarrier and on the other block's (mapa, an arrive on the shared::cluster address),
    which expect twice the consumer warps. The pair meets at a cluster barrier after the
    mbarriers' initialisation (no copy into a peer's uninitialised mbarrier) and at the end
    of the launch (no arrival on an exited block's). Half the shared operand's reads from L2.

    With `wgmma_in_flight` = 1 (with `wgmma` and at least 3 stages), each tile's wgmma are
    waited for one tile later (`wgmma.wait_group 1`; all of them after the loop), so a
    tile's multiplies overlap the wait for the next tile and the issue of its wgmma; the
    copies then run S - 2 tiles ahead (into the stage of tile t - 2, whose wgmma are done).

    With `tf32` (with `wgmma`; `block_k` = 32), A and B are f32 and are multiplied as TF32
    (`wgmma.mma_async` m64nNk8 .tf32, f32 accumulators): the tensor cores read each operand's
    sign, exponent and top 10 mantissa bits, so a product carries a relative error of up to
    2^-10 per operand where f32 SIMT code rounds at 2^-24. This is the precision PyTorch
    gives an fp32 matmul when TF32 is allowed (`torch.backends.cuda.matmul.allow_tf32`); a
    schedule opts in with this option and kforge never adds it by itself (kforge-tune
    proposes it only under `--allow-tf32`, whose runs verify against a TF32 tolerance). A
    128-byte swizzled row holds 32 f32 of K, a tile is 4 wgmma of 8 of K, and the 16-byte
    copies carry 4 elements. TF32 wgmma reads both operands K-major only: A as M x K, and B
    as N x K (nn.Linear's weight, `x @ W^T`); a B stored K x N, or an A stored K x M, is a
    silenceable failure, unless `swap_ab` is set.

    With `swap_ab` (with `tf32` and `tma`; A as M x K, B as K x N: a plain `A @ B`), the
    warpgroups compute the transposed product C^T = B^T A^T, as CUTLASS's register-sourced
    kernels do: TMA copies both operands as they lie (B in atoms of 32 columns of N), each
    thread reads its fragments of B from the stage into registers (wgmma's register A
    operand: lane l of warp w holds rows 16 w + l / 4 (+ 8) of B^T, of K l % 4 (+ 4)), and A's
    K-major stage is the instruction's B (m64nMk8, M the block's rows, at most 256). The warp
    grid is [1, 4 x G] over warp tiles of all the block's rows by 16 columns (64 columns of the
    result per warpgroup); a lane's accumulators are C^T's, so the epilogue and the stores
    take each element at its transposed place (pairs along M, not N).

    With `producer_warpgroup` (with `warp_specialized`), the producer is a whole warpgroup (the
    grid's threads plus 128; its first thread issues the copies, the others only wait at the
    block's barriers) that gives its registers to the consumers, as CUTLASS's warp-specialized
    kernels do: the kernel is compiled for at most R = 65536 / threads registers a thread
    (`.maxnreg`, rounded down to 8), the producer warpgroup lowers its own to 40 (24 with more
    than two consumer warpgroups) with `setmaxnreg.dec` and the consumer warpgroups raise
    theirs with `setmaxnreg.inc` to what the block's R x threads registers leave them (a
    multiple of 8, at most 256): 232 for two consumer warpgroups, where a lone producer warp
    leaves 9 warps at most 168.

    With `stage_epilogue` (staged, with `async_stages` and the stages in dynamic shared
    memory), the result goes out through shared memory: after the K loop the block meets at
    a barrier, each lane writes its (epilogue-applied) pairs into a tile of the result in
    the stages' memory (rows padded by 16 bytes), the block meets again, and its threads
    store whole rows in 16-byte vectors (coalesced), instead of each lane's 4- or 8-byte
    pairs. It fails when the result tile does not fit in the stages, its rows are not
    contiguous or not whole 16-byte vectors, or its elements are not 16 or 32 bits.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, when the target is not such a
    matmul: not a `linalg.matmul` on memrefs, element types other than bf16/f16 x bf16/f16
    -> f32 (A and B the same; with `tf32`, f32 x f32 -> f32), dynamic shapes, M, N or K not multiples of 16, 8 and 16, or
    A's innermost stride not 1, or K not a multiple of 16 x `k_steps`; staged, also when the
    warp grid does not cut the tile into whole instruction tiles,
    `block_k` is not a multiple of 16 dividing K (with `async_stages`, K need only be a
    multiple of 8: the last tile's copies past K are zero-filled), or the tile's columns are not a
    multiple of 8 (the block's threads need not divide the tiles' 8-element vectors: the last round
    of copies repeats the last vector),
    the two stages exceed 48 KB, B's rows are not contiguous, or the matmul is not in a
    gpu.launch of exactly the grid's threads (with `warp_specialized`, plus 32); with `ldmatrix`, also when the warp tile's columns
    are not a multiple of 16; with `async_stages`, also when A's or B's rows are not whole
    16-byte copies (a leading stride not a multiple of 8 elements); with `wgmma`, also when the
    warp grid is not 4 x G warps by 1 over 16-row warp tiles, the tile's columns are not a
    multiple of 64 up to 256, or the launch already has dynamic shared memory; with `tma`, also
    when A or B is not a unit-stride subview of a row-major, static-shape memref defined
    outside the gpu.launch with rows a multiple of 16 bytes; with `stage_epilogue`, also when
    the stages are not in dynamic shared memory or cannot hold the result tile, or the result's
    rows are not contiguous whole 16-byte vectors of 16- or 32-bit elements. Consumes the
    target handle and returns nothing (the matmul is gone).

    The op fails to verify when an option contradicts another: `k_steps` below 1, `block_k`
    negative, `warp_grid` not two positive counts when staged, `async_stages` other than 0
    that is below 2 or not staged, `ldmatrix` not staged, `tma` without `wgmma`,
    `warp_specialized` without `tma`, `persistent_blocks` negative, or positive without
    `warp_specialized` or with `stage_epilogue`, `cluster_multicast` other than "", "a" or
    "b", or set without `warp_specialized` or with `persistent_blocks`, `wgmma`
    without `async_stages`, with `block_k` other than 64 or with `ldmatrix`,
    `wgmma_in_flight` other than 0 that is not 1 with `wgmma` and at least 3 stages,
    `stage_epilogue` without `async_stages`, `tf32` without `wgmma` (then `block_k` must
    be 32 instead of 64), `swap_ab` without `tf32` and `tma`, or `producer_warpgroup` without `warp_specialized`.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       DefaultValuedAttr<I64Attr, "1">:$k_steps,
                       DefaultValuedAttr<I64Attr, "0">:$block_k,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$warp_grid,
                       UnitAttr:$ldmatrix,
                       DefaultValuedAttr<I64Attr, "0">:$async_stages,
                       UnitAttr:$wgmma,
                       UnitAttr:$tma,
                       UnitAttr:$warp_specialized,
                       DefaultValuedAttr<I64Attr, "0">:$persistent_blocks,
                       DefaultValuedAttr<StrAttr, "\"\"">:$cluster_multicast,
                       DefaultValuedAttr<I64Attr, "0">:$wgmma_in_flight,
                       UnitAttr:$stage_epilogue,
                       UnitAttr:$tf32,
                       UnitAttr:$swap_ab,
                       UnitAttr:$producer_warpgroup);
  let results = (outs);
  let hasVerifier = 1;
}

def MatmulToSimtStagedOp : Kforge_ReplacingOp<"matmul_to_simt_staged", "::mlir::linalg::MatmulOp", "expected a linalg.matmul on memrefs"> {
  let summary = "Compute a block's fp32 matmul tile through shared memory, a strided share per thread";
  let description = [{
    Targets a bufferized f32 `linalg.matmul` that one block computes, in a `gpu.launch` of
    rows x columns (`thread_grid`) threads along x. The K loop walks tiles of `block_k`: the
    block's threads copy A's (M x block_k) and B's (block_k x N) tile into shared memory
    together (4-element vectors, consecutive threads on consecutive 16 bytes), A transposed
    (rows padded by 4) so that both are read along M and N. Two stages: while the threads
    multiply one, each thread's share of the next tile is loaded into registers and then
    stored into the other; one barrier per tile. Thread (y, x) accumulates in registers the
    rows 4y + 4 rows x q + i and columns 4x + 4 columns x q + j (groups of 4, strided over the
    grid, so a warp's 4-wide shared-memory reads are consecutive), one fused multiply-add per
    element per step of K. The fill before the matmul and an elementwise epilogue after it are
    taken into the accumulators as in `kforge.matmul_to_mma_sync`; results are stored 4
    columns at a time. With `async_b`, B's next tile goes straight into its stage by
    asynchronous 16-byte copies (`cp.async`, waited for before the tile's barrier) instead of
    through registers held across the multiply: fewer registers, one spill fewer at 128.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, when the target is not such a
    matmul: not a `linalg.matmul` on memrefs, not f32, dynamic shapes, A's or B's rows not
    contiguous, a grid that does not cut the tile into groups of 4 rows and columns, `block_k`
    not a multiple of 4 dividing K or the tiles not whole vectors per thread, more than 48 KB
    of shared memory for two stages, a launch that is not the grid's threads, or C used after
    the matmul by an op other than the epilogue. Consumes the target handle and returns
    nothing (the matmul is gone).

    The op fails to verify when `thread_grid` is not two positive counts or `block_k` is not a
    positive multiple of 4.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       I64Attr:$block_k,
                       DenseI64ArrayAttr:$thread_grid,
                       UnitAttr:$async_b);
  let results = (outs);
  let hasVerifier = 1;
}

def ImplicitGemmToSimtStagedOp : Kforge_ReplacingOp<"implicit_gemm_to_simt_staged", "::mlir::linalg::LinalgOp", "expected a linalg op on memrefs"> {
  let summary = "Compute a block's fp32 contraction (a convolution as its implicit GEMM) through shared memory";
  let description = [{
    Targets a bufferized f32 linalg op whose body is `out + x * y` (a convolution in any layout,
    stride, dilation or padding, the guarded generic a padded one becomes in
    `kforge-normalize-importer`, or a matmul in any indexing) that one block computes, in a
    `gpu.launch` of rows x columns (`thread_grid`) threads along x. Its loops are read as a
    GEMM's: the parallel loops only x's side reads are its M (rows, linearized, innermost
    last), those only y's side reads its N (columns), the reduction loops its K; the sides
    are oriented so that the output's innermost dimension is a column loop where it can be.
    No im2col is built: each element of a K tile is computed from its loop positions by the
    body's own ops (cloned per element). The K loop walks tiles of `block_k`: the block's
    threads compute A's (M x block_k) and B's (block_k x N) tile into shared memory together,
    4 elements per thread along the loop the operand is contiguous in (consecutive threads on
    consecutive addresses), both stored K-major (rows padded by 4); two stages with the next
    tile in registers, one barrier per tile; each thread accumulates groups of 4 rows and
    columns strided over the grid, one fused multiply-add per element per step of K, as in
    `kforge.matmul_to_simt_staged`. A K that block_k does not divide reads zeros past its
    end. The fill before the op and an elementwise epilogue after it (on the output's shape)
    are taken into the accumulators; without a fill the accumulators start from the output's
    values. `serial_loops` names parallel loops the block tile left whole (a batch): the block
    walks their positions one at a time, one GEMM each. With `async_copies`, where each
    multiplicand is an element read (an input, a `memref.load`, or `select(c, read, 0.0)`: a
    padded read), the next tile goes straight into its stage by asynchronous 4-byte copies
    (`cp.async`, zero-filled where the read is masked or past K), waited for before the tile's
    barrier, instead of through registers held across the multiply; a thread's 4 copies then
    take consecutive K positions where K's innermost loop is whole groups of 4 (they share the
    window's padding check). `copy_order` says how the asynchronous copies are shared out:
    `k_groups` (the default) as just said, K's longest loop innermost; `contiguous`, one element
    a thread per copy, consecutive threads along each multiplicand's contiguous side (its M or
    N loop, else K), K's loops in the op's order with a multiplicand's contiguous K loop
    innermost (a warp's 32 copies read consecutive addresses: a row of NCHW's input, a run of
    an FCHW filter); `contiguous_longest_k`, the same with K's longest loop innermost (fewer
    divisions per element, a filter read along its channels).

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, when the target is not such an
    op: not on memrefs, not f32, a body other than `out + x * y` of pure ops and element
    reads, no M, N or K loop, dynamic loop sizes (a partial tile), a loop both sides read (a
    batch) wider than 1 and not serial, a grid that does not cut the tile into groups of 4
    rows and columns, `block_k` above K, `async_copies` on a multiplicand that is not an element
    read, more shared memory than a block has, a launch that is
    not the grid's threads, or the output used after the op by an op other than the epilogue.
    Consumes the target handle and returns nothing (the op is gone).

    The op fails to verify when `thread_grid` is not two positive counts, `block_k` is not a
    positive multiple of 4, or `copy_order` is not one of the three (or not `k_groups` without
    `async_copies`).
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       I64Attr:$block_k,
                       DenseI64ArrayAttr:$thread_grid,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$serial_loops,
                       UnitAttr:$async_copies,
                       DefaultValuedAttr<StrAttr, "\"k_groups\"">:$copy_order);
  let results = (outs);
  let hasVerifier = 1;
}

def ImplicitGemmToMmaSyncOp : Kforge_ReplacingOp<"implicit_gemm_to_mma_sync", "::mlir::linalg::LinalgOp", "expected a linalg op on memrefs"> {
  let summary = "Compute a block's bf16/f16 contraction (a convolution as its implicit GEMM) on tensor cores";
  let description = [{
    Targets a bufferized linalg op whose body is `out + x * y` with bf16 or f16 multiplicands
    (both the same type, as read, or extended to f32 by `arith.extf` in the body, as an
    importer's bf16 convolution accumulating in f32 writes them) and an f32 output: a
    convolution in any layout, stride, dilation or padding, the guarded generic a padded one
    becomes in `kforge-normalize-importer`, or a matmul in any indexing, that one block
    computes in a `gpu.launch` of 32 x rows x columns threads along x (`warp_grid`). Its
    loops are read as a GEMM's as in `kforge.implicit_gemm_to_simt_staged`; the block's tile
    is padded to whole 16-row tiles per warp row and 16-column pairs per warp column, and each
    warp multiplies its share with `mma.sync` m16n8k16 (f32 accumulators), fragments read
    from shared memory by `ldmatrix`. The K loop walks tiles of `block_k` through two stages:
    each multiplicand is staged with rows along K where it is contiguous along a K loop
    (NHWC's channels, a filter's input channels; that loop then innermost in K), else with
    rows along its M or N (read by `ldmatrix` transposed). The next tile is copied while the
    warps multiply: by 16-byte `cp.async` of 8 consecutive elements along a stage row where
    the multiplicand's contiguous loop is whole groups of 8 read at that loop's own index
    from 16-byte aligned rows and any padding check does not depend on it (zero-filled where
    the window leaves the input or K ends), else one element a thread through registers. A K
    that block_k does not divide reads zeros past its end. With `stages` above 2 (every copy
    must then be a 16-byte cp.async), that many stages: tiles 0 .. stages - 2 are in flight
    before the K loop, and each iteration waits for its tile, meets the block at a barrier,
    issues the tile stages - 1 ahead into the stage the previous iteration read and multiplies
    its own. The fill before the op, an elementwise init (a bias) and an elementwise epilogue
    after it (a rounding to bf16) are taken into the accumulators; `serial_loops` as in
    `kforge.implicit_gemm_to_simt_staged`.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, when the target is not such an
    op: not on memrefs, not 16-bit multiplicands with an f32 output, a body other than `out
    + x * y` of pure ops and element reads, no M, N or K loop, a dynamic loop size that is
    not a partial block tile, a loop both sides read wider than 1 and not serial, `block_k`
    above K rounded up to 16, `stages` above 2 where a multiplicand is copied element by
    element, more shared memory than a block has, a launch that is not the grid's threads, or
    the output used after the op by an op other than the epilogue.
    Consumes the target handle and returns nothing (the op is gone).

    With `wgmma` (Hopper, sm_90a), `warp_grid = [4 gm, gn]` is gm x gn warpgroups of 4 warps,
    each multiplying 64 rows of the block by a gn-th of its columns with `wgmma.mma_async`
    m64nNk16, reading both stages through
    shared-memory descriptors: the stages are 128-byte swizzled (a multiplicand staged along
    K as rows of the 64 of K a tile has, one staged along M or N in atoms of 64 of its rows
    or columns, each 64 rows of K), written by the same copies at swizzled places and made
    visible to the tensor cores by a proxy fence before the block's barrier. `block_k` must
    then be 64, the warpgroup rows' 64 gm rows must cover the block's rows, and each
    warpgroup's columns (the block's padded to gn x 64 where B is staged along N, else to
    gn x 8) be at most 256; it fails (silenceably) otherwise. `wgmma_in_flight = 1` waits for each tile's wgmma
    one tile later, so they run while the block waits for, copies and fences the next tile:
    cp.async stages are then filled stages - 2 tiles ahead (3 stages or more); with two
    stages, a tile's cp.async copies (which go into the stage the previous tile's wgmma read)
    wait for those wgmma first.

    With `tf32` (and `wgmma`), f32 multiplicands and an f32 output are multiplied as TF32
    (`wgmma.mma_async` m64nNk8 `.tf32`, the precision torch's allow_tf32 allows): both
    multiplicands must be contiguous along a K loop (staged K-major: the `.tf32` form reads no
    transposed operand; NHWC's input, an FHWC filter, or channels-last copies of NCHW and
    FCHW), 16-byte copies are 4 f32 and a swizzled row 32 of them, so `block_k` is 32.

    The op fails to verify when `warp_grid` is not two positive counts of at most 32 warps
    in all, `block_k` is not a positive multiple of 16, `stages` is not 2 to 8,
    `wgmma_in_flight` is not 0 or 1 (1 only with `wgmma`), or `tf32` is set without `wgmma`.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       I64Attr:$block_k,
                       DenseI64ArrayAttr:$warp_grid,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$serial_loops,
                       DefaultValuedAttr<I64Attr, "2">:$stages,
                       UnitAttr:$wgmma,
                       DefaultValuedAttr<I64Attr, "0">:$wgmma_in_flight,
                       UnitAttr:$tf32);
  let results = (outs);
  let hasVerifier = 1;
}

def PrefetchRowsToL2Op : Kforge_InPlaceOp<"prefetch_rows_to_l2", "::mlir::gpu::LaunchOp", "expected a gpu.launch"> {
  let summary = "Have each block of a row kernel prefetch, into L2, the row a block `ahead` later will read";
  let description = [{
    Targets a `gpu.launch` whose block b reads row b of one or more kernel inputs (a
    `memref.subview` at `[gpu.block_id x, 0]` of sizes `[1, N]` and unit strides, of a 2-D
    memref defined outside the launch that the kernel does not write). At the kernel's start,
    thread (0, 0, 0) of block b issues, for each such input, one asynchronous bulk prefetch of
    row b + `ahead` into L2 (`cp.async.bulk.prefetch.L2.global`, sm_90 and later), when that row
    exists. With `ahead` the number of blocks resident at once (a wave), the next wave's rows
    stream from DRAM while this wave computes, and its loads then hit L2: a row kernel with one
    block per multiprocessor otherwise leaves DRAM idle while each block reduces and
    normalises its row. Only a hint: the kernel's results do not depend on it. The bulk
    prefetch takes 16-byte pieces at 16-byte aligned addresses: a row whose start or size is
    not a multiple of 16 bytes (a 50257-wide f32 row) is prefetched from the 16-byte piece
    holding its start to the last piece that ends inside it (a few bytes of the row before it,
    nothing past the buffer, which kforge's ABI aligns to 16 bytes).

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not a
    `gpu.launch` or reads no such row (or none of at least 16 bytes at static offsets and
    strides). Only reads the target
    handle. The op fails to verify when `ahead` is not positive.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       I64Attr:$ahead);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let hasVerifier = 1;
}

def GroupBlockOrderOp : Kforge_InPlaceOp<"group_block_order", "::mlir::gpu::LaunchOp", "expected a gpu.launch"> {
  let summary = "Run a 2-D grid's blocks in groups of `rows` block rows, column by column within a group";
  let description = [{
    Renumbers the target `gpu.launch`'s blocks along x and y: the launch's linear block number
    p = y * gx + x (the order the GPU starts blocks in) takes, within each group of `rows`
    block rows (the last group may have fewer), the group's blocks column by column:
    y' = first row of p's group + (p mod the group's size) mod its rows, x' = (p mod the group's
    size) / its rows; every use of the block ids x and y in the body takes x', y' instead (z
    is left alone). A bijection of the grid onto itself, so a kernel whose blocks are
    independent computes the same result in another order. Why: the blocks resident at once
    share operand tiles through L2. Row by row (each block row a row of the output's tiles,
    x its columns), a wave of blocks reads one or two block rows of A and all of B; in groups
    of `rows` rows it reads `rows` rows of A and a wave / `rows` columns of B: on an 8192^3
    gemm of 256 x 128 tiles, 132 blocks at once, about 133 MB a wave instead of 280. A launch
    in clusters is renumbered cluster by cluster (the same on the grid of clusters, `rows`
    cluster rows a group), each block keeping its place in its cluster: a cluster's blocks
    still take adjacent tiles, which its multicast copies rely on.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not a
    `gpu.launch` or has cluster sizes that are not constants. Only reads the target handle.
    The op fails to verify when `rows` is not positive.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       I64Attr:$rows);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let hasVerifier = 1;
}

def StashRowsInSharedOp : Kforge_InPlaceOp<"stash_rows_in_shared", "::mlir::gpu::LaunchOp", "expected a gpu.launch"> {
  let summary = "Keep part of each thread's row values in shared memory while its block reduces";
  let description = [{
    Targets a `gpu.launch` of a row kernel whose block reduces its row with block-wide
    `gpu.all_reduce` ops in the launch body's entry block, each thread holding its slice of the
    row as 1-D vectors (after `transform.kforge.distribute_rows_to_lanes` and vectorization). A
    vector value defined before such a reduction and used after it lives in registers across
    the reduction; for each of them, its last `quarters` / 4 of elements (rounded down) are
    stored into shared memory right after its definition and loaded back before its first use
    after each reduction it crosses, the other elements staying in registers.

    Why: a row held wholly in registers limits the blocks (rows) that fit on a multiprocessor
    (a 32000-wide fp32 row over 800 threads takes 72 registers each: one block), and a
    multiprocessor with one block leaves DRAM idle while that block reduces. With part of the
    row in shared memory, two blocks fit (with a register cap, `set_kernel_attributes
    {min_blocks_per_sm = 2}`): one block loads while the other reduces.

    Each thread reads back only what it stored, so no barrier is added; element i of a thread t's
    stash slot lives at (slot * m + i) * threads + t, so a warp's accesses fall on 32 consecutive
    words (no bank conflict). Values whose live ranges do not overlap share a slot. The buffer is
    a workgroup attribution up to 48 KB and dynamic shared memory above.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not a `gpu.launch`
    of a 1-D block of static size, has no block-wide reduction in its entry block, no vector of
    two or more elements (one length, one element type) live across one, or needs more shared
    memory than a block has. Only reads the target handle. The op fails to verify when
    `quarters` is not 1, 2 or 3.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       I64Attr:$quarters);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let hasVerifier = 1;
}

def PipelineRowsOp : Kforge_InPlaceOp<"pipeline_rows", "::mlir::gpu::LaunchOp", "expected a gpu.launch"> {
  let summary = "Make a row kernel's blocks loop over rows, copying the next row into shared memory meanwhile";
  let description = [{
    Targets a `gpu.launch` of a row kernel: a 1-D grid of R blocks and a 1-D block of T threads
    (static), block b reading row b of one kernel input at `[gpu.block_id x, 0]` (a 2-D memref
    defined outside the launch and not written by it, its rows contiguous and whole 16-byte
    multiples) through vector.transfer_reads of subviews of that row, all of them before the
    body's first block-wide reduction (`gpu.all_reduce`).

    The launch gets `blocks` blocks, each looping over rows b, b + blocks, ...: the body becomes
    an `scf.for` over its rows. The row is read from a shared-memory copy of it: before the loop
    each block copies its first row in by cp.async (16 bytes per copy, the block's threads
    taking consecutive 16-byte pieces), and in each iteration, once the threads have read the
    row (after a barrier behind the first reduction), they start copying the next one, which
    lands while the block reduces, normalises and writes the current row. With `blocks` the
    blocks resident at once, DRAM keeps reading while each block computes (a kernel of one
    block per multiprocessor otherwise leaves it idle then).

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not such a
    launch: not a 1-D grid and block of static sizes, fewer rows than `blocks`, no row of a
    kernel input read at `[block_id x, 0]` (or more than one input's), a use of the row other
    than subviews and transfer_reads, a read of it after the first block-wide reduction, no
    such reduction, or a row larger than a block's shared memory. Only reads the target
    handle. The op fails to verify when `blocks` is not positive.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       I64Attr:$blocks);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let hasVerifier = 1;
}

// Patterns for transform.apply_patterns (PatternDescriptorOpInterface).
def ApplyEraseUnusedChecksPatternsOp : Op<Transform_Dialect, "apply_patterns.kforge.erase_unused_checks",
    [DeclareOpInterfaceMethods<PatternDescriptorOpInterface>]> {
  let summary = "Erase linalg ops on tensors whose results nothing uses and whose only effect is cf.assert";
  let description = [{
    A linalg op on tensors whose results have no use, and whose body has no side effect but
    `cf.assert` (torch-mlir's bounds checks of a gather's indices), is erased.

    Why: fuse_into_containing_op tiles a producer into the loop that consumes it and leaves
    the original dead. Canonicalization erases dead ops only when they have no side effects,
    and an assert is one, so the original stayed: on the GPU it was left on the host, where
    the lowering refuses it (cross entropy's loss kernel compiled no proposal). The fused copy
    keeps the asserts on every element a kernel computes; an element nothing uses is neither
    computed nor checked.
  }];
  let assemblyFormat = "attr-dict";
}

#endif // KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS
