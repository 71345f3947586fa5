//===- Rows.cpp - row kernels: lanes, lane_vector, moments, prefetch_rows, pipeline_rows, stash -===//
//
// The actions of kernels that reduce rows (softmax, norms, row sums): a row spread over the lanes of a warp
// or a block, wider accesses per lane, merged statistics, and the ops on the mapped kernel that keep DRAM busy
// (a prefetch of later rows, a loop of blocks over rows with the next row copied meanwhile) or free registers.
//
//===----------------------------------------------------------------------===//

#include "../ActionDefinition.h"
#include "../Renderer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace kforge::tune;
using llvm::StringRef;

/// A row kernel's op on the gpu.launch with one integer attribute (prefetch_rows, pipeline_rows, stash).
static bool renderLaunchOp(Renderer &r, size_t index, const Schedule &schedule, StringRef result, StringRef op,
                           StringRef attribute, StringRef what) {
  const Action &action = schedule[index];
  r.line("    // action " + std::to_string(index) + ": " + describe(action) + ": " + what.str());
  std::string launches = r.matchLaunches();
  r.line("    " + r.fresh(result) + " = transform.kforge." + op.str() + " " + launches + " {" + attribute.str() +
         " = " + std::to_string(action.value) + "} : " + Renderer::kUnary);
  return true;
}

namespace {

class LanesAction : public ActionDefinition {
public:
  LanesAction()
      : ActionDefinition(
            ActionSpec{
                "lanes",
                "Spread each thread's row over `count` lanes of a warp: lane l takes columns l, l + count, ... (one "
                "warp-wide access reads consecutive elements), and every reduction over the row becomes a partial per "
                "lane "
                "combined by warp shuffles (gpu.subgroup_reduce), whose result every lane holds; beyond 32 lanes a row "
                "spans "
                "several warps of a one-row block, and its reductions combine over the block (gpu.all_reduce: "
                "shuffles, "
                "then shared memory). Followed by vectorize, a "
                "lane reads its slice of the row once into registers and every phase of the row works on them "
                "(kforge-unroll-strided-transfers keeps the vector out of local memory).",
                "transform.kforge.distribute_rows_to_lanes on the thread-level scf.forall",
                {{"count",
                  ParamType::Int,
                  {8, 16, 32, 64, 128, 256, 512, 1024},
                  {},
                  "lanes per row (32: a warp per row; more: several warps per row, one row per block; besides these, "
                  "any "
                  "multiple of 32 up to 1024 that divides the row, e.g. 800 for a 32000-wide row)"}},
                {"gpu"},
                "a 2-D root, or a row sum, without a contraction; tile(thread) of one row per thread (size 1 on the "
                "rows, the row "
                "whole) and fuse(thread) when there are producers; at least count columns in the row (a multiple of "
                "count with lane_vector or moments; otherwise the first lanes take one column more); at most 1024 "
                "threads; more than 32 lanes: tile(block) of one row"},
            {{"", 43}}) {}

  std::optional<std::string> outOfDomain(int64_t value) const override {
    const ParamSpec &param = *intParam();
    if (llvm::is_contained(param.values, value) || (value >= 32 && lanesCountAllowed(value)))
      return std::nullopt;
    return "lanes." + param.name + " is " + std::to_string(value) + ", expected one of " +
           joinInts(param.values, ", ") + " (or a multiple of 32 up to 1024)";
  }

  void validate(const ValidationContext &context) const override {
    const Action &action = context.action();
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    size_t rank = facts.parallelSizes.size();
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
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
      problem(index, "unsupported",
              "lanes: only 2-D roots and row sums without a contraction (softmax, norms, "
              "elementwise chains, row sums) are distributed over lanes");
    else if (facts.multiResultReductions > 0)
      problem(index, "unsupported",
              "lanes combines each reduction's lane partials with one shuffle combiner; a reduction with several "
              "results (argmax / argmin: a value and its index) has none: a thread per row takes it");
    else if (facts.reductionInnermost == 0)
      problem(index, "unsupported",
              "lanes spreads a row's reduction over lanes along the row's contiguous elements; this root reduces "
              "across its input's rows (a sum over a middle dimension: each output a strided column): a thread "
              "per output, consecutive threads on consecutive columns, reads it coalesced (tile(block) over the "
              "outputs, tile(thread) of 1)");
    else if (!before("tile", "thread") || !oneRow || rowLoops != 1)
      problem(index, "precondition",
              "lanes needs tile(thread) of one row per thread before it: size 1 on the "
              "rows, the last loop of a 2-D root whole (0)");
    else if (facts.linalgOps > 1 && !before("fuse", "thread"))
      problem(index, "precondition", "lanes needs fuse(thread) before it (the row's producers in the thread)");
    else if (width % action.value != 0 && (findSlot(schedule, "moments") || findSlot(schedule, "lane_vector")))
      problem(index, "shape",
              "lanes(" + std::to_string(action.value) + "): the row (" + std::to_string(width) +
                  " elements) is not a multiple of the lanes, which lane_vector and moments need (a lane's vectors "
                  "and its partial statistics cover whole shares of the row)");
    else if (width < action.value)
      problem(index, "shape",
              "lanes(" + std::to_string(action.value) + "): the row has only " + std::to_string(width) +
                  " elements (a lane would have none)");
    else if (action.value > 32 && blockExtent(schedule, facts, 0) != 1)
      problem(index, "precondition",
              "lanes(" + std::to_string(action.value) +
                  ") spreads a row over several warps, reduced over the whole block: "
                  "tile(block) must hold one row (size 1 on the rows)");

    std::vector<int64_t> dims = blockDims(schedule, facts);
    if (dims[0] * dims[1] * dims[2] > 1024)
      problem(index, "too-large",
              "lanes(" + std::to_string(action.value) + ") makes " + std::to_string(dims[0] * dims[1] * dims[2]) +
                  " threads per block; the GPU allows 1024");
  }

  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    const Action &action = schedule[index];
    r.line("    transform.apply_cse to " + r.func + " : !transform.any_op");
    std::string rows = r.fresh("row_loop");
    r.line("    " + rows +
           " = transform.structured.match ops{[\"scf.forall\"]} attributes{mapping = "
           "[#gpu.thread<x>]} in " +
           r.blockLoop + " : " + r.kUnary);
    std::string lanes = r.fresh("lane_loop");
    const Action *vector = findSlot(schedule, "lane_vector");
    r.line("    " + lanes + " = transform.kforge.distribute_rows_to_lanes " + rows +
           " {lanes = " + std::to_string(action.value) + (vector ? ", vector = " + std::to_string(vector->value) : "") +
           (findSlot(schedule, "moments") ? ", moments" : "") + "} : " + r.kUnary);
    r.threadLoop = r.inner = lanes; // the thread loop is replaced (its other handles are gone)
    return true;
  }

  /// The lane counts that divide the payload's row (multiples of 32 that are not powers of two included).
  std::vector<int64_t> searchValues(const PayloadFacts &facts) const override {
    std::vector<int64_t> counts = lanesCounts(facts);
    return counts.empty() ? ActionDefinition::searchValues(facts) : counts;
  }
};

class LaneVectorAction : public ActionDefinition {
public:
  LaneVectorAction()
      : ActionDefinition(
            ActionSpec{
                "lane_vector",
                "Give each lane `width` consecutive columns out of every width x count instead of one out of every "
                "count "
                "(lane l: columns l*width + j + k*width*count, j < width): a lane's accesses become width-element "
                "vectors "
                "(16 bytes with 4 fp32), so a row moves in width times fewer load and store instructions, a warp-wide "
                "access still reading consecutive memory; each reduction first combines the lane's width partials.",
                "the vector option of transform.kforge.distribute_rows_to_lanes (the backend merges the lane's "
                "adjacent "
                "accesses into vector loads and stores)",
                {{"width", ParamType::Int, {2, 4}, {}, "consecutive columns per lane (4 fp32 elements: 16 bytes)"}},
                {"gpu"},
                "lanes before it; the row a multiple of width x the lanes' count"},
            {{"", 44}}) {}

  void validate(const ValidationContext &context) const override {
    const Action &action = context.action();
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
    const Action *lanes = findSlot(schedule, "lanes");
    int64_t width = lanesRowWidth(schedule, facts);
    if (!lanes || !before("lanes", ""))
      problem(index, "precondition", "lane_vector needs lanes before it (it widens each lane's columns)");
    else if (lanes->value > 0 && width % (lanes->value * action.value) != 0)
      problem(index, "shape",
              "lane_vector(" + std::to_string(action.value) + "): the row (" + std::to_string(width) +
                  " elements) is not a multiple of " + std::to_string(action.value) + " x " +
                  std::to_string(lanes->value) + " lanes");
  }

  bool render(Renderer &r, size_t, const Schedule &) const override {
    r.line("    // (rendered as the vector option of the lanes action's distribute_rows_to_lanes)");
    return true;
  }
};

class MomentsAction : public ActionDefinition {
public:
  MomentsAction()
      : ActionDefinition(
            ActionSpec{
                "moments",
                "Combine a row's sum and its centred sum of squares (a layernorm's mean and variance: sum(x), then "
                "sum((x - sum / N)^2)) over the lanes in one round instead of two dependent ones: each lane sums its "
                "columns and their squared deviations from its own mean, and the lanes merge the pairs by Chan et "
                "al.'s "
                "pairwise update (shuffles; beyond a warp, one barrier and two shared values per warp). Half the "
                "dependent shuffles and barriers of the row's reductions; the variance is as accurate as the two-pass "
                "one.",
                "the moments option of transform.kforge.distribute_rows_to_lanes",
                {},
                {"gpu"},
                "lanes before it; the payload's row program has a row sum whose centred values are squared and summed; "
                "beyond 32 lanes, a power of 2 of warps"},
            {{"", 45}}) {}

  void validate(const ValidationContext &context) const override {
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
    const Action *lanes = findSlot(schedule, "lanes");
    if (!lanes || !before("lanes", ""))
      problem(index, "precondition", "moments needs lanes before it (it merges the lanes' partial statistics)");
    else if (facts.rowMoments == 0)
      problem(index, "payload",
              "moments: the payload has no row sum whose centred values (x - sum / N) are "
              "squared and summed (a layernorm's mean and variance)");
    else if (lanes->value > 32 && !llvm::isPowerOf2_64(lanes->value / 32))
      problem(index, "shape",
              "moments with lanes(" + std::to_string(lanes->value) + "): a row over " +
                  std::to_string(lanes->value / 32) +
                  " warps; the warps' partials merge pairwise, so their number must be a power of 2");
  }

  bool render(Renderer &r, size_t, const Schedule &) const override {
    r.line("    // (rendered as the moments option of the lanes action's distribute_rows_to_lanes)");
    return true;
  }
};

class PrefetchRowsAction : public ActionDefinition {
public:
  PrefetchRowsAction()
      : ActionDefinition(
            ActionSpec{
                "prefetch_rows",
                "At its start, each block of a row kernel asks L2 for the row the block `ahead` rows later will read "
                "(one "
                "bulk prefetch per input row, by one thread; sm_90 and later): with `ahead` a wave of resident blocks, "
                "the "
                "next wave's rows stream from DRAM while this wave reduces and normalises its rows, and its loads then "
                "hit "
                "L2 (a row kernel with one block per multiprocessor otherwise leaves DRAM idle between its loads).",
                "transform.kforge.prefetch_rows_to_l2 on the gpu.launch (cp.async.bulk.prefetch.L2.global)",
                {{"ahead",
                  ParamType::Int,
                  {132, 264, 528, 1056},
                  {},
                  "rows ahead: the blocks resident at once (132: one per H200 multiprocessor) or a multiple; besides "
                  "these, "
                  "any count from 1 to 65536"}},
                {"gpu"},
                "lanes with one row per block (tile(block) of one row); rows of at least 16 bytes (a row not of whole "
                "16-byte pieces is prefetched from the piece holding its start to the last one ending inside it)"},
            {{"", 75}}) {}

  std::optional<std::string> outOfDomain(int64_t value) const override { return countOutOfDomain(*this, value); }

  void validate(const ValidationContext &context) const override {
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
    if (!findSlot(schedule, "lanes") || !before("lanes", ""))
      problem(index, "precondition", "prefetch_rows needs lanes before it (a row kernel)");
    else if (blockExtent(schedule, facts, 0) != 1)
      problem(index, "precondition",
              "prefetch_rows prefetches the row of each block: tile(block) must hold one "
              "row (size 1 on the rows), not " +
                  std::to_string(blockExtent(schedule, facts, 0)));
    else if (int64_t rowBytes = lanesRowWidth(schedule, facts) * facts.elementBytes(); rowBytes < 16)
      problem(index, "shape",
              "prefetch_rows prefetches 16-byte pieces of a row; a row of " +
                  std::to_string(lanesRowWidth(schedule, facts)) + " elements is " + std::to_string(rowBytes) +
                  " bytes");
  }

  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    return renderLaunchOp(r, index, schedule, "prefetching", "prefetch_rows_to_l2", "ahead",
                          "each block prefetches the row a block that many rows later reads");
  }
};

class PipelineRowsAction : public ActionDefinition {
public:
  PipelineRowsAction()
      : ActionDefinition(
            ActionSpec{
                "pipeline_rows",
                "Make a row kernel's blocks loop over rows, `blocks` blocks in all: each copies its next row into "
                "shared "
                "memory (one bulk copy by the TMA unit, on an mbarrier) while it reduces, normalises and writes the "
                "current one, read from the previous copy. With `blocks` the blocks resident at once, DRAM keeps "
                "reading "
                "while every block computes (a kernel of one block per multiprocessor otherwise leaves it idle then).",
                "transform.kforge.pipeline_rows on the gpu.launch (cp.async.bulk.shared::cluster.global, mbarrier)",
                {{"blocks",
                  ParamType::Int,
                  {132, 264, 396, 528, 660, 792, 924, 1056},
                  {},
                  "blocks in the grid: those resident at once (1 to 8 per H200 multiprocessor; more wait for a free "
                  "one); besides these, any count from 1 to 65536"}},
                {"gpu"},
                "lanes of whole warps (a block reducing its row) and vectorize before it; not with prefetch_rows, "
                "stash or moments; rows of one input; a row that fits in shared memory"},
            {{"", 76}}) {}

  std::optional<std::string> outOfDomain(int64_t value) const override { return countOutOfDomain(*this, value); }

  void validate(const ValidationContext &context) const override {
    const PayloadFacts &facts = context.facts;
    const Schedule &schedule = context.schedule;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
    const Action *lanes = findSlot(schedule, "lanes");
    int64_t elementBytes = facts.elementBytes();
    if (!lanes || !before("lanes", "") || lanes->value <= 32)
      problem(index, "precondition", "pipeline_rows needs lanes of whole warps before it (a block reducing its row)");
    else if (!before("vectorize", ""))
      problem(index, "precondition", "pipeline_rows needs vectorize before it (the row's reads are vectors)");
    else if (findSlot(schedule, "prefetch_rows") || findSlot(schedule, "stash") || findSlot(schedule, "moments"))
      problem(index, "unsupported",
              "pipeline_rows copies the next row itself after the block's first reduction: not with prefetch_rows, "
              "stash or moments");
    else if (facts.rowInputs > 1)
      // The transform op copies one input's next row into shared memory (cosine similarity reads two).
      problem(index, "unsupported",
              "pipeline_rows copies one input's rows ahead; the kernel reads rows of " +
                  std::to_string(facts.rowInputs) + " inputs");
    else if (lanesRowWidth(schedule, facts) * elementBytes > kMaxSharedBytesPerBlock - 1024)
      problem(index, "too-large",
              "pipeline_rows: a row of " + std::to_string(lanesRowWidth(schedule, facts) * elementBytes) +
                  " bytes does not fit in a block's shared memory");
    // The launch's rows (its blocks before pipelining) must give every block one: a loss's last reduction is
    // a single row, where the transform op refuses 132 blocks.
    int64_t rows = 1;
    for (size_t d = 0; d < facts.parallelSizes.size(); ++d)
      rows *= llvm::divideCeil(facts.parallelSizes[d], std::max<int64_t>(1, blockExtent(schedule, facts, d)));
    if (context.action().value > rows)
      problem(index, "shape",
              "pipeline_rows(" + std::to_string(context.action().value) + "): more blocks than the launch's " +
                  std::to_string(rows) + " rows");
  }

  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    return renderLaunchOp(r, index, schedule, "pipelined", "pipeline_rows", "blocks",
                          "blocks loop over rows, the next row copied into shared memory meanwhile");
  }
};

class StashAction : public ActionDefinition {
public:
  StashAction()
      : ActionDefinition(
            ActionSpec{
                "stash",
                "Keep the last `quarters` / 4 of each lane's row values in shared memory instead of registers while "
                "the "
                "block reduces its row (stored after they are computed, loaded back where they are next used): fewer "
                "registers per thread, so with a register cap (occupancy(2)) two blocks of a wide row fit on a "
                "multiprocessor, one loading while the other reduces. Measured slower on softmax 1024 x 32000 (the "
                "4-byte copies, and spills at the cap): not proposed by the heuristic.",
                "transform.kforge.stash_rows_in_shared on the gpu.launch",
                {{"quarters",
                  ParamType::Int,
                  {1, 2, 3},
                  {},
                  "quarters of each lane vector's elements kept in shared memory"}},
                {"gpu"},
                "lanes of whole warps (a block-wide row) and vectorize before it (the lanes' row values are vectors)"},
            {{"", 77}}) {}

  void validate(const ValidationContext &context) const override {
    const Schedule &schedule = context.schedule;
    ProblemSink problem{context};
    int index = static_cast<int>(context.index);
    auto before = [&](StringRef kind, StringRef level) { return context.before(kind, level); };
    const Action *lanes = findSlot(schedule, "lanes");
    if (!lanes || !before("lanes", "") || lanes->value <= 32)
      problem(index, "precondition", "stash needs lanes of whole warps before it (a block reducing its row)");
    else if (!before("vectorize", ""))
      problem(index, "precondition", "stash needs vectorize before it (it keeps parts of the lanes' row vectors)");
  }

  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    return renderLaunchOp(r, index, schedule, "stashed", "stash_rows_in_shared", "quarters",
                          "part of each lane's row values in shared memory across the block's reductions");
  }
};

} // namespace

void kforge::tune::addRowActions(ActionDefinitions &definitions) {
  definitions.push_back(std::make_unique<LanesAction>());
  definitions.push_back(std::make_unique<LaneVectorAction>());
  definitions.push_back(std::make_unique<MomentsAction>());
  definitions.push_back(std::make_unique<PrefetchRowsAction>());
  definitions.push_back(std::make_unique<PipelineRowsAction>());
  definitions.push_back(std::make_unique<StashAction>());
}
