//===- PayloadFacts.h - what the search needs to know about a payload -*- C++ -*-===//
//
// Plain data extracted once from the payload (which op is the root, its loop sizes, whether there is a
// contraction and its K, the element type), so that the registry's validator, the renderer, the policies and
// kforge-tune need no MLIR: `kforge-compile --facts-json` writes them (kforge::analyzePayload).
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_PAYLOADFACTS_H
#define KFORGE_TUNE_PAYLOADFACTS_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::tune {

struct PayloadFacts {
  std::string entry;                  ///< Entry function.
  std::string rootOp;                 ///< The op producing the returned value (e.g. linalg.generic).
  std::vector<int64_t> parallelSizes; ///< The root's leading parallel loops' sizes (what block/thread tiles cut).
  int64_t rootLoops = 0;              ///< All the root's loops (parallel and reduction); 0 when unknown.
  /// Reshapes (tensor.expand_shape / collapse_shape) between the root and the return, looked through: an
  /// importer's Linear on a 3-D input is a 2-D matmul whose result is expanded back to 3-D.
  int64_t rootReshapes = 0;
  std::string contractionOp;          ///< linalg.matmul / linalg.batch_matmul if the payload has one, else empty.
  int64_t contractionK = 0;           ///< Its reduction size.
  std::vector<int64_t> contractionSizes; ///< Its parallel loops' sizes ((batch,) rows, columns).
  std::string contractionOperandType;  ///< Its operands' element type (f32, bf16, f16), if they agree.
  /// Its result's element type: what it accumulates in (f32 for torch-mlir's bf16 contractions, which
  /// truncate after). Empty when unknown (facts from before it was recorded).
  std::string contractionResultType;
  /// Its operands read transposed through its indexing maps: A as K x M, B as N x K (nn.Linear's weight once
  /// kforge-normalize-importer has folded the transpose into the map).
  bool contractionATransposed = false, contractionBTransposed = false;
  /// Its B is an argument of the entry function (not computed there): what transpose_b copies in a kernel of
  /// its own.
  bool contractionBFromArgument = false;
  /// Not from the IR but from the tuning request (kforge-tune --allow-tf32, as PyTorch's
  /// torch.backends.cuda.matmul.allow_tf32): the fp32 contraction may multiply in TF32 on the tensor cores
  /// (the tf32 action), its kernels verified against TF32's tolerance. Off unless the user opts in.
  bool allowTf32 = false;
  int64_t contractionOps = 0;         ///< Linalg ops it is made of: itself and its producers (its init's fill).
  int64_t reductionOps = 0;           ///< linalg ops with a reduction loop (contractions included).
  int64_t reductionSize = 0;          ///< Largest reduction loop of the ops that are not contractions (row sums,
                                      ///< softmax); 0 if none. A fused copy of such an op spans all of it.
  int64_t linalgOps = 0;              ///< All linalg ops of the entry.
  /// Root parallel loops (indices into parallelSizes) that a producer with a reduction (softmax's row sum,
  /// layernorm's mean) is read whole along: the root reads its result broadcast over them. Tiling such a loop
  /// at block or thread level with the producer fused makes every tile recompute the whole row and, after
  /// bufferization, write it into a buffer the tiles share: measured wrong results on the H200.
  std::vector<int64_t> wholeDims;
  /// Row sums whose centred values (x - sum / N) are squared and summed (a layernorm's mean and variance,
  /// kforge::matchRowMoments): the pairs the moments action combines in one round.
  int64_t rowMoments = 0;
  /// Whether the root's own reduction runs along its inputs' contiguous dimension (1: a row sum), across it
  /// (0: torch.sum over a middle dimension, each output a column of the input read with a stride), or -1: the
  /// root reduces nothing, or facts from before this was recorded.
  int64_t reductionInnermost = -1;
  /// Elementwise ops besides the root whose result holds at least a row of the largest reduction (softmax's
  /// exp(x - max) when it has two users): what a thread tile with a reduction fused in keeps per row, in local
  /// memory. 0 when the reductions read their rows from the arguments or from producers fused into their
  /// bodies (a loss's (a - b)^2 summed): nothing of a row is kept, however long. -1: not recorded (facts read
  /// from before it was; assume some).
  int64_t rowIntermediates = -1;
  /// linalg ops with a reduction loop and several results (argmax / argmin: the extreme value and its index),
  /// which MLIR 22's vectorizer does not take.
  int64_t multiResultReductions = 0;
  /// linalg ops whose body checks its indices (cf.assert: torch-mlir's bounds checks of a gather), which MLIR
  /// 22's vectorizer does not take.
  int64_t indexChecks = 0;
  /// Reductions whose body reads a loop index (linalg.index: a loss gathering each row's value at its row),
  /// which upstream's split_reduction keeps as it was, so that after a split it names the chunk, not the element.
  int64_t reductionsReadingIndex = 0;
  /// Arguments a reduction reads as rows (rank 2 or more, the innermost dimension the reduction's length): the
  /// inputs a row kernel's blocks read row by row (cosine similarity's two). 0 when unknown.
  int64_t rowInputs = 0;
  std::string elementType;            ///< Element type of the returned value (f32, bf16, ...).
  /// Bytes per element of `elementType` (8 for f64, 4 for f32, 2 for the 16-bit types).
  int64_t elementBytes() const {
    return elementType == "f64" || elementType == "i64" ? 8 : elementType == "f32" || elementType == "i32" ? 4 : 2;
  }
  /// Convolutions and poolings (linalg's window ops): each reduces over its own window, per output point.
  int64_t windowOps = 0;
  /// Every reduction is a window (a convolution, possibly with an elementwise epilogue): none reduces rows that
  /// another op reads whole, so the row rules do not apply, and a partial tile of outputs is masked like any.
  bool reductionsAreWindows() const { return windowOps > 0 && windowOps == reductionOps; }
  /// A convolution root read as its implicit GEMM (kforge/Transforms/ImplicitGemm.h): each root loop's role,
  /// 'm' (a row of the GEMM), 'n' (a column), 'k' (the reduction) or 'b' (read by both sides: one position per
  /// block), in loop order; empty when the root is no window op of the form out + x * y.
  std::string implicitGemm;
  /// The implicit GEMM's multiplicands' element type (f32, bf16, ...), when they agree.
  std::string implicitGemmType;
  /// "bf16" or "f16" when the implicit GEMM can run on tensor cores: both multiplicands of that type (as read,
  /// or extended to f32 in the body, as importers write a bf16 convolution) and an f32 output; else empty.
  std::string implicitGemmMmaType;
  /// Both multiplicands' tiles can be copied 8 elements (16 bytes of 16-bit floats) at a time: each read along
  /// its contiguous loop, at that loop's own index, whole groups of 8, any padding check independent of it (NHWC
  /// input with its channels, an HWCF or FHWC filter; not NCHW). The tensor-core implicit GEMM's stages beyond
  /// two need it.
  bool implicitGemmVectorCopies = false;
  /// Its K: the product of the root's reduction loops' sizes.
  int64_t implicitGemmK = 0;
  /// Both its multiplicands are element reads (or padded ones): its tiles can be copied by cp.async.
  bool implicitGemmReads = false;
  /// The multiplicands (0: x, 1: y of the body's out + x * y) whose tensors the channels_last action copies with
  /// their channels innermost (kforge/Transforms/ChannelsLast.h: an NCHW input, an FCHW filter), and each copy's
  /// transpose's shape ([outer, inner, C] or [inner, C]); empty when the implicit GEMM has no channel loop or
  /// both are channels-last already.
  std::vector<int64_t> channelsLastMultiplicands;
  std::vector<std::vector<int64_t>> channelsLastShapes;
  /// implicitGemmVectorCopies of the convolution reading those copies.
  bool channelsLastVectorCopies = false;
  /// Both multiplicands are contiguous along a K loop (staged K-major: what TF32 wgmma reads), as the payload
  /// is and on the channels-last copies.
  bool implicitGemmKMajor = false;
  bool channelsLastKMajor = false;
  /// Matmul-like contractions (M and N loops) that read (through any chain of linalg ops and reshapes) the result
  /// of an op with a reduction loop: two chained Linear layers, a matmul after a norm. Fused into the reading op's
  /// tiles, the reduction would be recomputed for every tile along the reader's other parallel loops, each a K-long
  /// slice (a 64 x 16384 one per block of l2_mlp_gelu's second matmul, whose compile ran past 10 minutes): such
  /// a payload is several kernels (kforge-partition), and no single-kernel schedule is proposed or accepted.
  int64_t contractionsAfterReductions = 0;
  /// Reductions that reduce over the results of other reductions (a loss's mean over the batch of per-row
  /// cosine similarities or log-sum-exps): the outer one needs every row's inner result, which the row kernels
  /// (a row per block) cannot give it. On the GPU such a payload is several kernels (kforge-partition). A
  /// reduction that reads another's result broadcast along its own reduced loop (layernorm's variance reading
  /// the mean, softmax's sum reading the max) is not counted: that is one row's work.
  int64_t nestedReductions = 0;
  /// Convolutions (window ops that read as an implicit GEMM) whose result another window op reads, directly or
  /// through elementwise ops (conv + max pool). Fused into the pooling's tiles, the convolution is computed point
  /// by point (the direct convolution), not as its implicit GEMM: on the GPU such a payload is several kernels
  /// (kforge-partition).
  int64_t convolutionsBeforeWindows = 0;
  int64_t flops = 0;
  int64_t bytes = 0;                  ///< Bytes of all arguments and results (the memory traffic floor).
  /// Bytes of the f32 arguments among them: what a GPU executor makes on the device for a seed instead of the
  /// judge drawing and uploading it (kforge-run's device inputs).
  int64_t f32ArgumentBytes = 0;
  std::string structuralHash;         ///< SHA-256 of the payload printed generically without locations.
};

llvm::json::Value toJSON(const PayloadFacts &facts);
bool fromJSON(const llvm::json::Value &value, PayloadFacts &facts, llvm::json::Path path);

} // namespace kforge::tune

#endif // KFORGE_TUNE_PAYLOADFACTS_H
