//===- MatmulNeighbours.h - a bufferized matmul's fill and epilogue -*- C++ -*-===//
//
// Shared by the transform ops that rewrite a bufferized linalg.matmul tile into explicit GPU code (tensor-core
// mma.sync, staged SIMT): the fill that initialises its C, the elementwise epilogue that can take C's values
// from registers, that epilogue's body applied to one element, and the two-stage shared-memory K loop.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMOPS_MATMULNEIGHBOURS_H
#define KFORGE_LIB_TRANSFORMOPS_MATMULNEIGHBOURS_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace kforge {

/// A bufferized matmul with static shapes: its operands and sizes (C is M x N; A M x K, or K x M when
/// `aTransposed`; B K x N, or N x K when `bTransposed`, as nn.Linear's weight is read once
/// kforge-normalize-importer has folded its transpose into the matmul's indexing maps).
struct MatmulTile {
  mlir::linalg::MatmulOp matmul;
  mlir::Value a, b, c;
  int64_t m = 0, n = 0, k = 0;
  bool aTransposed = false, bTransposed = false;
  /// A partial tile (a block tile that does not divide M or N, the last along its loop): C's rows or columns
  /// as a value, at most `m` / `n` (its static bound); null when static.
  mlir::Value mExtent, nExtent;
};

/// The matmul as a MatmulTile, or failure with `why` set: not on memrefs, element types that
/// `elementTypesProblem` (given A's, B's and C's) rejects with a reason, dynamic shapes, or indexing maps
/// other than A (m, k) or (k, m), B (k, n) or (n, k), C (m, n); a transposed operand only when
/// `allowTransposed` (the rewrite reads it so). With `allowPartial`, M and N may be dynamic where C's sizes are
/// bounded by a constant (an affine.min of the block tile and the rest of the loop): the tile records them.
mlir::FailureOr<MatmulTile>
staticMatmulTile(mlir::linalg::MatmulOp matmul,
                 llvm::function_ref<std::string(mlir::Type, mlir::Type, mlir::Type)> elementTypesProblem,
                 std::string &why, bool allowTransposed = false, bool allowPartial = false);

/// The size of dimension `d` of `memref` as a value in scope: a subview's or an allocation's dynamic size (null
/// when it is neither).
mlir::Value dynamicSize(mlir::Value memref, int64_t d);

/// The least constant `value` cannot exceed: a constant, or the smallest constant result of an affine.min.
std::optional<int64_t> constantUpperBound(mlir::Value value);

/// `i` clamped to a partial tile's last row or column (`extent` - 1, an affine.min); `i` itself when the extent
/// is static (null). Reads past the edge of a partial tile go there: valid addresses, values nothing stores.
mlir::Value clampToExtent(mlir::OpBuilder &b, mlir::Location loc, mlir::Value i, mlir::Value extent);

/// The gpu.launch around `op` when its block is exactly `threads` x 1 x 1 threads (constants), else null.
mlir::gpu::LaunchOp launchOfThreads(mlir::Operation *op, int64_t threads);

/// The innermost stride of a memref, if static.
std::optional<int64_t> innermostStride(mlir::MemRefType type);

/// What surrounds a bufferized matmul writing C.
struct MatmulNeighbours {
  mlir::linalg::FillOp fill; ///< Initialises C just before the matmul (pure ops between them aside), or null.
  /// The epilogue, applied to C's values in registers in this order (empty: none): elementwise ops that
  /// update C in place, then possibly one that writes another buffer.
  llvm::SmallVector<mlir::linalg::GenericOp> epilogue;
  mlir::memref::AllocOp cBuffer; ///< C's buffer when the epilogue's result goes elsewhere: erased with it.
  /// With `initOps`, when there is no fill: the copy into C (a buffer of the block's) of C's initial values just
  /// before the op (bufferization's private copy of an output the op accumulates into), or an elementwise op
  /// that writes C without reading it (a bias broadcast into a convolution's init: its body gives each
  /// accumulator's first value); erased with it.
  mlir::memref::CopyOp initCopy;
  mlir::linalg::GenericOp initGeneric;
  /// Where the result goes: the last epilogue op's output, or C.
  mlir::Value result(mlir::Value c) const {
    return epilogue.empty() ? c : mlir::linalg::GenericOp(epilogue.back()).getDpsInits()[0];
  }
};

/// The fill right before the matmul (pure ops between them aside) that writes C (its only output); then the epilogue: the next ops with
/// effects after the matmul that are all-parallel rank-2 linalg.generics with one output (identity map),
/// reading C through the identity map and not their output's old values, without linalg.index; each either
/// writes C in place (the chain goes on) or writes another buffer (the chain ends there; C must then be a
/// memref.alloc used only by the fill, the matmul and the chain, and is erased).
MatmulNeighbours findMatmulNeighbours(mlir::linalg::LinalgOp matmul, bool initOps = false);

/// Whether an op after the matmul in its block (other than a dealloc or the epilogue) uses C: each thread
/// writes only its own elements of C, so such an op would read the others' without a barrier.
bool cUsedAfter(mlir::linalg::LinalgOp matmul, llvm::ArrayRef<mlir::linalg::GenericOp> epilogue);

/// Erases what a rewrite of the matmul replaced: its epilogue (last first), the matmul, its fill and C's buffer
/// when nothing else uses it.
void eraseMatmulAndNeighbours(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp matmul,
                              const MatmulNeighbours &neighbours);

/// The block of a staged SIMT rewrite of `op` (the staged SGEMM's matmul, a convolution's implicit GEMM; `what`
/// names it in messages, `output` its result): the gpu.launch of exactly `threads` threads (its threads copy the
/// tiles together), room for `stageBytes` of two stages, and the neighbours whose work the rewrite takes into
/// registers (`initOps`: findMatmulNeighbours'), with nothing else reading the output after it. Failure sets
/// `why`.
mlir::LogicalResult stagedSimtBlock(mlir::linalg::LinalgOp op, int64_t threads, int64_t stageBytes, bool initOps,
                                    llvm::StringRef what, llvm::StringRef output, mlir::gpu::LaunchOp &launch,
                                    MatmulNeighbours &neighbours, std::string &why);

/// Shared memory a block may use on sm_90: 48 KB as static declarations, 227 KB in all with the rest dynamic
/// (the runtime raises a kernel's dynamic limit when its launch asks for more than 48 KB).
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
constexpr int64_t kMaxSharedBytesPerBlock = 227 * 1024;

/// Bytes of a statically shaped memref.
int64_t memrefBytes(mlir::MemRefType type);

/// Why `bytes` of shared buffers cannot be given to the launch (too many; or more than the static 48 KB in a
/// launch that already takes dynamic shared memory), or "".
std::string sharedBuffersProblem(mlir::gpu::LaunchOp launch, int64_t bytes);

/// Shared buffers of these (static, workgroup address space) types for the launch: workgroup attributions while
/// together they fit the 48 KB of static shared memory, else 128-byte aligned views of the launch's dynamic
/// shared memory (`gpu.dynamic_shared_memory`, its size set on the launch). `sharedBuffersProblem` first.
/// `swizzled`: always dynamic, each buffer 1024-byte aligned (a 128-byte swizzle's pattern repeats every 1024
/// bytes of address, which wgmma's descriptors assume start at a multiple of 1024).
llvm::SmallVector<mlir::Value> sharedBuffers(mlir::OpBuilder &b, mlir::Location loc, mlir::gpu::LaunchOp launch,
                                             llvm::ArrayRef<mlir::MemRefType> types, bool swizzled = false);

/// The block's K loop over `tiles` tiles of `blockK` through two shared-memory stages, one barrier per tile:
/// before the loop, tile 0 is copied into stage 0 (`copy(kOffset, stage)`; a barrier); in iteration t, the
/// next tile's share is loaded from global memory into registers (`load(kOffset, stage)`, `stage` the one it
/// will be stored into, which no thread reads any more: a load may also start asynchronous copies into it; the
/// last iteration reloads its own tile into the unused stage: no branch, nothing reads it), the block multiplies stage t % 2
/// (`multiply(stage, accumulators)`), then the share is stored into the other stage (`store`) and all threads
/// meet at a barrier. Returns the accumulators after the loop.
template <typename Share>
llvm::SmallVector<mlir::Value> twoStageKLoop(
    mlir::OpBuilder &b, mlir::Location loc, int64_t tiles, int64_t blockK, mlir::ValueRange init,
    llvm::function_ref<Share(mlir::Value, mlir::Value)> load, llvm::function_ref<void(const Share &, mlir::Value)> store,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value, llvm::SmallVector<mlir::Value>)> multiply) {
  using namespace mlir;
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  store(load(index(0), index(0)), index(0));
  gpu::BarrierOp::create(b, loc);
  auto loop = scf::ForOp::create(b, loc, index(0), index(tiles), index(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  MLIRContext *ctx = b.getContext();
  AffineExpr t = getAffineDimExpr(0, ctx);
  Value tile = loop.getInductionVar();
  auto onTile = [&](AffineExpr e) -> Value {
    return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, e), tile);
  };
  Value stage = onTile(t % 2), other = onTile((t + 1) % 2);
  Value next = affine::AffineMinOp::create(
      b, loc, AffineMap::get(1, 0, {(t + 1) * blockK, getAffineConstantExpr((tiles - 1) * blockK, ctx)}, ctx),
      ValueRange{tile});
  Share share = load(next, other);
  SmallVector<Value> acc = multiply(stage, SmallVector<Value>(loop.getRegionIterArgs()));
  store(share, other);
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, acc);
  return SmallVector<Value>(loop.getResults());
}

/// The epilogue's ops for one element of C: `epilogueElement` for each in turn.
mlir::Value epilogueChainElement(mlir::OpBuilder &b, mlir::Location loc,
                                 llvm::ArrayRef<mlir::linalg::GenericOp> epilogue, mlir::Value c, mlir::Value value,
                                 mlir::ValueRange position);

/// The epilogue's body for one element of C (`value`, at C[position...], an index per dimension of C): its other
/// inputs read through their indexing maps (scalars as they are), the body cloned at the builder's position;
/// returns the yielded value.
mlir::Value epilogueElement(mlir::OpBuilder &b, mlir::Location loc, mlir::linalg::GenericOp epilogue, mlir::Value c,
                            mlir::Value value, mlir::ValueRange position);

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMOPS_MATMULNEIGHBOURS_H
