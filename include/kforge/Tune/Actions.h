//===- Actions.h - kforge's semantic actions: registry, validation, rendering -*- C++ -*-===//
//
// A schedule is an ordered list of actions; an action is a small JSON object
//   {"kind": "tile", "params": {"level": "block", "sizes": [64, 64]}}
// The registry is the single source of truth about actions: which kinds exist, their parameters and the
// values each may take, which targets accept them, and in which order they may appear. Each kind is one
// definition (lib/Tune/ActionDefinition.h; the families in lib/Tune/actions/); the validator, the renderer
// (schedule -> transform-dialect library), the search's mutators, the LLM prompt and docs/actions.md are loops
// over the definitions.
//
// The rendered schedule is one `@__transform_main` named sequence: the actions' fragments in order, then a
// target-specific finish (bufferization; on the GPU the mapping of the block / thread loops to the grid and
// the block; vector lowering) that is not an action because every schedule needs exactly it.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_ACTIONS_H
#define KFORGE_TUNE_ACTIONS_H

#include "kforge/Tune/PayloadFacts.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::tune {

/// How a parameter's value is written.
enum class ParamType { Int, IntList, Enum };

/// One parameter of an action kind. `values` is the domain: every allowed int (Int, and every element of an
/// IntList) or every allowed string (Enum, in `choices`).
struct ParamSpec {
  std::string name;
  ParamType type;
  std::vector<int64_t> values;
  std::vector<std::string> choices;
  std::string doc;
  std::string listSeparator = "x"; ///< How an IntList is written in an action's text ("tile(block, 64x64)").
};

/// One kind of action. A kind with a `level` parameter is several "slots" (tile at block / thread /
/// reduction level); every slot appears at most once in a schedule, in increasing `phase` order.
struct ActionSpec {
  std::string kind;
  std::string summary;
  std::string renders; ///< The transform ops it renders to, for the docs.
  std::vector<ParamSpec> params;
  std::vector<std::string> targets; ///< "gpu", "cpu".
  std::string requires_;           ///< Preconditions in words, for the docs and the prompt.
};

/// The registry: every action kind kforge can apply.
llvm::ArrayRef<ActionSpec> actionRegistry();
const ActionSpec *findAction(llvm::StringRef kind);

/// One action of a schedule, parsed. Its parameters live in three fields, by their type in the kind's spec:
/// the enum parameter in `level` (tile's level, fuse's into), the integer list in `sizes` (tile's sizes,
/// reorder's permutation) and the one integer parameter in `value` (unroll's factor, lanes' count, split_k's
/// parts, mma's k_steps, stage's block_k, ...: the spec names it).
struct Action {
  std::string kind;
  std::string level;          ///< The enum parameter; empty for kinds without one.
  std::vector<int64_t> sizes; ///< The integer-list parameter.
  int64_t value = 0;          ///< The integer parameter.
};
using Schedule = std::vector<Action>;

/// Why an action or a schedule was rejected, in a form a search or an LLM can act on.
struct Problem {
  int action = -1;    ///< Index of the action at fault; -1: the schedule as a whole.
  std::string code;   ///< unknown-kind, bad-param, out-of-domain, order, precondition, shape, target, too-large,
                      ///< unsupported (a combination the compiler is known not to handle), policy (an action
                      ///< the request does not allow: tf32 without --allow-tf32).
  std::string message;
};
llvm::json::Value toJSON(const Problem &problem);

/// Parses a schedule: a JSON array of actions, or an object with an "actions" array. Syntax and domain
/// problems are reported (empty result: parsed).
std::vector<Problem> parseSchedule(const llvm::json::Value &value, Schedule &schedule);
llvm::json::Value toJSON(const Action &action);
llvm::json::Value toJSON(const Schedule &schedule);

/// Structural checks against the payload and the target: order, preconditions, shapes, limits.
std::vector<Problem> validateSchedule(const Schedule &schedule, const PayloadFacts &facts, llvm::StringRef target);

/// parseSchedule, then (if it parsed) validateSchedule.
std::vector<Problem> checkSchedule(const llvm::json::Value &value, const PayloadFacts &facts, llvm::StringRef target,
                                   Schedule &schedule);

/// {"status": "invalid", "problems": [...]}: how tools report a rejected schedule.
llvm::json::Value invalidScheduleReport(llvm::ArrayRef<Problem> problems);

/// The position of an action's slot in the canonical order (tile(block) < fuse(block) < tile(thread) <
/// fuse(thread) < ... < vectorize < ... < the kernel attributes); each slot appears at most once.
int actionPhase(const Action &action);

/// The sizes a tile at `level` may take (block / thread: 0 leaves the loop whole; reduction: the K step).
llvm::ArrayRef<int64_t> tileSizeDomain(llvm::StringRef level);
/// A loop extent that is not a multiple of 32: its block tiles may be any of its divisors, not only powers of
/// two (see the tile action).
bool irregularExtent(int64_t extent);

/// A lane count `lanes` may take: the registry's (powers of two), or any multiple of 32 up to 1024 (whole
/// warps: rows whose width has no large power-of-two divisor, 32000 = 800 x 40).
bool lanesCountAllowed(int64_t count);
/// The row `lanes` spreads over lanes: a 2-D root's last loop, a row sum's reduction; 0 for other payloads.
int64_t rowWidth(const PayloadFacts &facts);
/// Every allowed lane count that divides the payload's row (empty without a row).
std::vector<int64_t> lanesCounts(const PayloadFacts &facts);

/// Whether `split` applies: a contraction (not the root) whose result feeds row reductions.
bool splitApplies(const PayloadFacts &facts);
/// The facts the actions after `split` are checked and rendered against: the contraction as the root.
PayloadFacts contractionFacts(const PayloadFacts &facts);
/// Whether `split_k` applies: the payload is a plain matmul (its fill and itself).
bool splitKApplies(const PayloadFacts &facts);
/// Whether `split_rows` applies: one row reduction (no contraction, convolution or argmax) over rows of one
/// dimension, its result read by nothing that re-reads its row, and no row-sized intermediate.
bool splitRowsApplies(const PayloadFacts &facts);
/// The facts the actions after split_rows(partials) are checked and rendered against: the payload's root with
/// the sum of each row's partials, a row of `partials` elements, as its reduction.
PayloadFacts splitRowsFacts(const PayloadFacts &facts, int64_t partials);
/// Whether `mma` can apply: a 2-D linalg.matmul with bf16 or f16 operands and K a multiple of 16.
bool mmaApplies(const PayloadFacts &facts);
/// Whether the fp32 matmul may go to TF32 tensor cores (mma ... tf32): TF32 allowed by the request, f32 operands
/// and result, K a multiple of 4 (mma.sync's forms also need A as M x K; TMA's, B as N x K too).
bool tf32Applies(const PayloadFacts &facts);
/// Whether `transpose_b` applies: one 2-D linalg.matmul (the payload's only reduction) reading A as M x K and B,
/// an argument, as K x N.
bool transposeBApplies(const PayloadFacts &facts);

/// Why no single-kernel schedule takes the payload (its contractions read a reduction's result: see
/// PayloadFacts::contractionsAfterReductions; on the GPU also its nested reductions: nestedReductions); empty
/// when none is known.
std::string severalKernelsReason(const PayloadFacts &facts, bool gpu);
/// The matmul's row dimension among the payload's parallel loops (its column one follows): 0 for a
/// linalg.matmul, 1 for a linalg.batch_matmul (whose staged forms take one batch per block).
size_t matmulRowDim(const PayloadFacts &facts);
/// The facts the actions after split_k(parts) are checked and rendered against: the partial matmul over
/// (parts, M, N) with K / parts, a linalg.generic.
PayloadFacts splitKFacts(const PayloadFacts &facts, int64_t parts);
/// The schedule's first action when it makes two kernels of the payload (split or split_k), else null.
const Action *kernelSplit(const Schedule &schedule);
/// The facts the schedule's actions act on: after split or split_k, those of the op they schedule.
PayloadFacts scheduledFacts(const Schedule &schedule, const PayloadFacts &facts);
/// The schedule without its split / split_k action (the contraction's schedule).
Schedule withoutSplit(const Schedule &schedule);

/// The schedule's action in a slot (kind and level), or null.
const Action *findSlot(const Schedule &schedule, llvm::StringRef kind, llvm::StringRef level = "");

/// Extent of the root's parallel loop `d` inside one block tile (the whole loop without a block tile).
int64_t blockExtent(const Schedule &schedule, const PayloadFacts &facts, size_t d);

/// The root's innermost tile: per parallel loop, the thread tile's size, else the block tile's, else the loop's.
std::vector<int64_t> innermostTile(const Schedule &schedule, const PayloadFacts &facts);

/// The GPU block the schedule launches: threads along x, y, z (1, 1, 1 without a thread-level tile). A thread
/// tile that does not divide its block tile takes ceil(block / thread) threads along that loop.
std::vector<int64_t> blockDims(const Schedule &schedule, const PayloadFacts &facts);
/// The threads of the block that only issue copies (warp_specialize's producer warp: 32), which blockDims
/// counts and the warp grid does not.
int64_t producerThreads(const Schedule &schedule);

/// Threads of a block along the root's parallel loop `d`: ceil(block tile / thread tile), 1 where the thread tile
/// leaves the loop whole.
int64_t threadsAlong(const Schedule &schedule, const PayloadFacts &facts, size_t d);

/// Whether loop `d`'s innermost tile may be partial (its block tile does not divide the loop, or its thread tile
/// the block's): its size inside the tile is then dynamic.
bool raggedAlong(const Schedule &schedule, const PayloadFacts &facts, size_t d);

/// stage on a convolution root (PayloadFacts::implicitGemm): the block's implicit GEMM as
/// transform.kforge.implicit_gemm_to_simt_staged reads it. A parallel loop the thread tile leaves whole (0)
/// while its block tile is wider than 1 is walked serially by the block (a batch left whole); the others are
/// the GEMM's rows (M loops), columns (N loops) or batch loops of one position. The thread grid has
/// ceil(block / thread tile) threads along each loop (a thread tile need not divide its block tile: the GEMM is
/// padded to whole groups of 4 rows and columns per thread, the padding masked).
struct ImplicitGemmTile {
  int64_t m = 1, n = 1, threadRows = 1, threadCols = 1; ///< The block's GEMM and its thread grid.
  std::vector<int64_t> serialLoops;
  std::string problem; ///< Why the tiles make no such GEMM (a batch loop wider than 1), or empty.
  /// Rows (columns) the grid covers: whole groups of 4 per thread.
  int64_t paddedM() const { return threadRows * perThread(m, threadRows); }
  int64_t paddedN() const { return threadCols * perThread(n, threadCols); }
  static int64_t perThread(int64_t extent, int64_t threads) { return ((extent + threads - 1) / threads + 3) / 4 * 4; }
};
ImplicitGemmTile implicitGemmTile(const Schedule &schedule, const PayloadFacts &facts);
/// Whether a SIMT `stage` (without mma) on this payload is its convolution's implicit GEMM: the facts read the
/// root (or the one convolution an elementwise root reads) as one, and the payload has no contraction op.
bool stageIsImplicitGemm(const PayloadFacts &facts);

/// Whether a block tile does not divide its loop, or a thread tile its block tile: the schedule has partial
/// (ragged) tiles at the loops' ends, which it renders masked (issue 27).
bool raggedTiles(const Schedule &schedule, const PayloadFacts &facts);

/// Why the schedule cannot take ragged tiles (an action whose lowering needs static, dividing tiles: a K tile,
/// stage with mma, lanes, a kernel split, ...), or empty when it can: tile, fuse, vectorize, reorder, the
/// launch bounds, the staged SIMT gemm (stage without mma) and the implicit GEMM (stage on a convolution, its
/// pipeline and mma too) are what the masked path covers.
std::string raggedTilesBlocker(const Schedule &schedule, const PayloadFacts &facts);

/// A transform library (module with `@__transform_main`) applying `schedule` to the payload. Each action's
/// fragment starts with a `// action N: ...` comment; `actionLines[N]` is its first line (1-based) and the
/// entry after the last action is the finish's, so a diagnostic's line can be traced back to the action that
/// caused it. Launch bounds (occupancy, max_registers) act on the gpu.launch the mapping makes: their
/// fragments come after the finish. Call only on a valid schedule.
std::string renderSchedule(const Schedule &schedule, const PayloadFacts &facts, llvm::StringRef target,
                           std::vector<int> *actionLines = nullptr);

/// The action (index) that rendered `line` of a rendered schedule; -1 for the preamble / finish.
int actionAtLine(llvm::ArrayRef<int> actionLines, int line, int totalActions);

/// A stable one-line text of an action, e.g. "tile(block, 64x64)"; the schedule's is "a; b; c".
std::string describe(const Action &action);
std::string describe(const Schedule &schedule);

/// SHA-256 (hex) of the schedule's canonical JSON.
std::string scheduleHash(const Schedule &schedule);

/// docs/actions.md, generated from the registry.
std::string actionsMarkdown();

} // namespace kforge::tune

#endif // KFORGE_TUNE_ACTIONS_H
