//===- KernelSplits.cpp - split, split_k, split_rows, channels_last, transpose_b: kernels of a payload ===//
//
// Each comes first in a schedule. After split and split_k the actions schedule the op they leave to the first
// kernel (split: the contraction; split_k: the partial matmul over slices of K), and they render the second
// kernel themselves; split_rows renders its first kernel (the rows' partials) and leaves the second to them;
// channels_last renders a transpose kernel per copied operand and leaves the convolution to them; transpose_b
// likewise for a matmul's B.
//
//===----------------------------------------------------------------------===//

#include "../ActionDefinition.h"
#include "../Renderer.h"
#include "../search/Search.h"

#include "llvm/ADT/STLExtras.h"

using namespace kforge::tune;

/// The values of `param` that cut `extent` into equal slices of at least `minimumSlice`.
static std::vector<int64_t> dividingValues(const ParamSpec &param, int64_t extent, int64_t minimumSlice) {
  std::vector<int64_t> out;
  for (int64_t v : param.values)
    if (extent % v == 0 && extent / v >= minimumSlice)
      out.push_back(v);
  return out;
}

namespace {

/// split's integer parameter is its row kernel's lane count: lanes' domain.
class SplitAction : public ActionDefinition {
public:
  SplitAction()
      : ActionDefinition(
            ActionSpec{
                "split",
                "Run the contraction as a kernel of its own and the row reductions after it (softmax, sigmoid + row "
                "sum) "
                "as a second kernel: one row per block over `lanes` lanes (the row in registers when it fits 128 "
                "values "
                "per lane), reduced over the block. The actions after split schedule the contraction: their tiles cut "
                "its parallel loops, fuse brings in its producers (its init's fill). Costs one write and one read of "
                "the "
                "contraction's result; saves each thread recomputing a row of the contraction.",
                "the lanes row schedule on the root (tile_using_forall, fuse_into_containing_op, "
                "transform.kforge.distribute_rows_to_lanes, vectorize), then the schedule on the contraction; each "
                "kernel's scf.forall mapped to a gpu.launch of its own",
                {{"lanes",
                  ParamType::Int,
                  {32, 64, 128, 256, 512, 1024},
                  {},
                  "lanes per row of the second kernel (or any multiple of 32 up to 1024 that divides the row)"}},
                {"gpu"},
                "first; a contraction (linalg.matmul, linalg.batch_matmul) whose result feeds reductions over the "
                "root's rows (a 2-D root or a row sum); lanes divides the row"},
            {{"", 5}}) {}

  std::optional<std::string> outOfDomain(int64_t value) const override {
    const ParamSpec &param = *intParam();
    if (llvm::is_contained(param.values, value) || (value >= 32 && lanesCountAllowed(value)))
      return std::nullopt;
    return "split." + param.name + " is " + std::to_string(value) + ", expected one of " +
           joinInts(param.values, ", ") + " (or a multiple of 32 up to 1024)";
  }

  void validate(const ValidationContext &context) const override {
    const Action &split = context.action();
    int64_t width = rowWidth(context.facts);
    if (!splitApplies(context.facts))
      context.problem("precondition", "split needs a contraction whose result feeds reductions over the root's "
                                      "rows (gemm + softmax, gemm + sigmoid + row sum); this payload has none");
    else if (split.value > 0 && width % split.value != 0)
      context.problem("shape", "split(" + std::to_string(split.value) + "): the row (" + std::to_string(width) +
                                   " elements) is not a multiple of the lanes");
  }

  bool splitsKernels() const override { return true; }
  PayloadFacts splitFacts(const Action &, const PayloadFacts &facts) const override { return contractionFacts(facts); }
  bool marksContractionProducers() const override { return true; }
  bool splitApplies(const PayloadFacts &facts) const override { return kforge::tune::splitApplies(facts); }
  /// The row kernel's lanes the search tries: a row over several warps, best guesses first.
  std::vector<int64_t> searchValues(const PayloadFacts &facts) const override { return search::blockLaneCounts(facts); }

  /// The contraction's kernel first: once its fill is fused, nothing of it is left at the function's level for
  /// the row kernel's fusions to take. The actions after split schedule it, as the root.
  void renderFirstKernel(Renderer &r, const Action &split, std::vector<int> &) const override {
    r.facts = contractionFacts(r.facts);
    r.producerAttr = "kforge.contraction_producer";
    r.leftoverPasses = false;
    r.root = r.fresh("contraction_root");
    r.line("    " + r.root + " = transform.structured.match ops{[\"" + r.facts.contractionOp +
           "\"]} in %func : " + Renderer::kUnary);
    r.kernelsAfter.push_back({split.value, 1, 1});
  }

  /// Then the row kernel, on the payload's root.
  void renderSecondKernel(Renderer &r, const Action &split, std::vector<int> &starts) const override {
    starts[0] = r.nextLine();
    r.line("    // action 0: " + describe(split) + ": the ops after the contraction, one row per block");
    r.facts = r.payloadFacts;
    r.producerAttr = "kforge.producer";
    r.leftoverPasses = true;
    std::string rowRoot = r.fresh("row_root");
    std::string producer = r.rootProducer("%return");
    r.line("    " + rowRoot + " = " + producer);
    r.root = rowRoot;
    r.inner = "%func";
    r.renderRowKernel(split.value);
    r.facts = contractionFacts(r.payloadFacts);
  }
};

class SplitKAction : public ActionDefinition {
public:
  SplitKAction()
      : ActionDefinition(
            ActionSpec{
                "split_k",
                "Split a matmul's reduction (K) into `parts` slices computed by different blocks into a buffer of "
                "partial "
                "results, then sum the partials in a second kernel: more blocks when the output is small and K long. "
                "The "
                "actions after split_k schedule the partial matmul: its parallel loops are (parts, M, N), its K is K / "
                "parts.",
                "transform.structured.split_reduction (split dimension first), the actions on the partial matmul, and "
                "a "
                "fixed schedule on the sum of the partials (16 x 128 outputs per block, 4 per thread, vectorized); "
                "each "
                "kernel's scf.forall mapped to a gpu.launch of its own",
                {{"parts", ParamType::Int, {2, 4, 8, 16}, {}, "how many slices K is split into"}},
                {"gpu", "cpu"},
                "first; the root is a plain matmul (linalg.matmul and its fill, nothing after it); parts divides K"},
            {{"", 5}}) {}

  void validate(const ValidationContext &context) const override {
    const Action &split = context.action();
    if (!splitKApplies(context.facts))
      context.problem("precondition", "split_k needs a payload that is a plain matmul (linalg.matmul and its fill, "
                                      "nothing after it)");
    else if (split.value > 0 && context.facts.contractionK % split.value != 0)
      context.problem("shape", "split_k(" + std::to_string(split.value) + "): K (" +
                                   std::to_string(context.facts.contractionK) + ") is not a multiple of the parts");
  }

  bool splitsKernels() const override { return true; }
  PayloadFacts splitFacts(const Action &split, const PayloadFacts &facts) const override {
    return splitKFacts(facts, split.value);
  }
  bool splitApplies(const PayloadFacts &facts) const override { return splitKApplies(facts); }
  bool multipliesBlocks() const override { return true; }
  /// The parts the search tries: those dividing K into slices of at least 512.
  std::vector<int64_t> searchValues(const PayloadFacts &facts) const override {
    return dividingValues(*intParam(), facts.contractionK, 512);
  }

  /// The partial matmul over (parts, M, N) with K / parts; its schedule follows.
  void renderFirstKernel(Renderer &r, const Action &split, std::vector<int> &starts) const override {
    starts[0] = r.nextLine();
    r.line("    // action 0: " + describe(split) + ": partial matmuls over slices of K, then their sum");
    r.line("    %partials_init, %partials_fill, %partial, %partials_sum = transform.structured.split_reduction %root "
           "{split_factor = " +
           std::to_string(split.value) +
           ", insert_split_dimension = 0} : "
           "(!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)");
    r.line("    transform.annotate %partials_fill \"kforge.contraction_producer\" : !transform.any_op");
    r.facts = splitKFacts(r.payloadFacts, split.value);
    r.producerAttr = "kforge.contraction_producer";
    r.leftoverPasses = false;
    r.root = "%partial";
    r.splitKSchedule = true;
  }

  /// Then the sum of the partials.
  void renderSecondKernel(Renderer &r, const Action &split, std::vector<int> &) const override {
    r.line("    // the sum of the partials (split_k's second kernel)");
    r.facts = r.payloadFacts;
    r.producerAttr = "kforge.producer";
    r.leftoverPasses = true;
    r.root = "%partials_sum";
    r.inner = "%func";
    r.renderPartialsSum();
    r.facts = splitKFacts(r.payloadFacts, split.value);
  }
};

/// split_rows's first kernel: partial results per block, one per thread.
constexpr int64_t kPartialsPerBlock = 256;

class SplitRowsAction : public ActionDefinition {
public:
  SplitRowsAction()
      : ActionDefinition(
            ActionSpec{
                "split_rows",
                "Split each row's reduction into `partials` partial results computed by a first kernel (partial p "
                "of a row reduces its elements p, p + partials, p + 2 partials, ...: consecutive threads read "
                "consecutive elements), 256 partials per block, one per thread; a second kernel reduces each row's "
                "partials and computes the rest of the payload. For few long rows (a loss over a whole tensor is "
                "one row; a matvec of 16 rows of a million), where a block per row leaves most multiprocessors "
                "idle. The actions after split_rows schedule the second kernel: the payload's root with a row of "
                "`partials` elements as its reduction.",
                "transform.structured.split_reduction (inner_parallel) on the row reduction, a fixed schedule on "
                "the partials (tile_using_forall by 256 partials per block and one per thread, their fill fused), "
                "then the actions after on the payload's root, the partials' reduction fused in; each kernel's "
                "scf.forall mapped to a gpu.launch of its own",
                {{"partials",
                  ParamType::Int,
                  {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288},
                  {},
                  "partial results per row (a multiple of 256 that divides the row)"}},
                {"gpu", "cpu"},
                "first; one row reduction (a linalg.generic of one parallel and one reduction loop: no contraction, "
                "convolution, argmax or layernorm moments, no read of its own loop index), over rows of one "
                "dimension, read by nothing that re-reads its row; partials divides the row, at least 2 elements "
                "each; no prefetch_rows after it"},
            {{"", 5}}) {}

  void validate(const ValidationContext &context) const override {
    const PayloadFacts &facts = context.facts;
    int64_t partials = context.action().value;
    if (!splitRowsApplies(facts))
      context.problem("precondition",
                      "split_rows needs one row reduction over rows of one dimension, read by nothing that re-reads "
                      "its row (a loss, a row sum, a matvec); this payload has " +
                          std::string(facts.reductionOps == 0            ? "none"
                                      : facts.reductionOps > 1           ? "several reductions"
                                      : facts.reductionsReadingIndex > 0 ? "one that reads its loop index (a gather "
                                                                           "at each row, which a split would misplace)"
                                      : !facts.wholeDims.empty()         ? "its row re-read after the reduction"
                                                                         : "another form"));
    else if (partials > 0 && facts.reductionSize % partials != 0)
      context.problem("shape", "split_rows(" + std::to_string(partials) + "): the row (" +
                                   std::to_string(facts.reductionSize) + ") is not a multiple of the partials");
    else if (partials > 0 && facts.reductionSize / partials < 2)
      context.problem("shape", "split_rows(" + std::to_string(partials) + "): the row (" +
                                   std::to_string(facts.reductionSize) + ") leaves fewer than 2 elements per partial");
    // The row kernel after the split reads rows of partials the first kernel wrote, not rows of an input at
    // [block_id x, 0], which is what prefetch_rows follows: its transform op refused the pair at compile time
    // (group norm's statistics).
    for (size_t i = context.index + 1; i < context.schedule.size(); ++i)
      if (context.schedule[i].kind == "prefetch_rows")
        context.problemAt(static_cast<int>(i), "unsupported",
                          "prefetch_rows: not after split_rows (the row kernel reads rows of partials the first "
                          "kernel wrote, not rows of an input, which is what the prefetch follows)");
  }

  bool splitsKernels() const override { return true; }
  PayloadFacts splitFacts(const Action &split, const PayloadFacts &facts) const override {
    return splitRowsFacts(facts, split.value);
  }
  bool splitApplies(const PayloadFacts &facts) const override { return splitRowsApplies(facts); }
  bool multipliesBlocks() const override { return true; }
  /// The partial counts the search tries: those dividing the row into partials of at least 32 elements.
  std::vector<int64_t> searchValues(const PayloadFacts &facts) const override {
    return dividingValues(*intParam(), facts.reductionSize, 32);
  }

  /// The partials: the reduction split, then its fixed schedule (a block per 256 partials of a row, a thread
  /// per partial, the partials' fill fused). The actions after schedule the root.
  void renderFirstKernel(Renderer &r, const Action &split, std::vector<int> &starts) const override {
    starts[0] = r.nextLine();
    r.line("    // action 0: " + describe(split) + ": each row's reduction as partials (a kernel), then their " +
           "reduction and the rest (a second kernel)");
    // A named row reduction (kforge-normalize-importer keeps contractions named: linalg.matvec) as a generic.
    r.line("    %named_rows = transform.structured.match ops{[\"linalg.matvec\", \"linalg.vecmat\"]} in %func : " +
           std::string(Renderer::kUnary));
    r.line("    %generic_rows = transform.structured.generalize %named_rows : " + std::string(Renderer::kUnary));
    r.line("    %rows_reduction = transform.structured.match ops{[\"linalg.generic\"]} attributes{iterator_types = "
           "[#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} in %func : " +
           std::string(Renderer::kUnary));
    r.line("    %partials_init, %partials_fill, %partial, %partials_sum = transform.structured.split_reduction "
           "%rows_reduction {split_factor = " +
           std::to_string(split.value) +
           ", insert_split_dimension = 1, inner_parallel} : "
           "(!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)");
    r.line("    transform.annotate %partials_fill \"kforge.partials_producer\" : !transform.any_op");
    // The partial op's loops: the row, the elements each partial reduces, the partials.
    int64_t rows = r.payloadFacts.parallelSizes[0], partials = split.value;
    int64_t each = partials > 0 ? r.payloadFacts.reductionSize / partials : 0;
    PayloadFacts partialFacts = r.payloadFacts;
    partialFacts.parallelSizes = {rows, each, partials};
    r.facts = partialFacts;
    r.producerAttr = "kforge.partials_producer";
    r.leftoverPasses = false;
    r.root = "%partial";
    int64_t perBlock = std::min(kPartialsPerBlock, partials);
    Schedule fixed = {Action{"tile", "block", {1, 0, perBlock}}, Action{"fuse", "block"},
                      Action{"tile", "thread", {1, 0, 1}}, Action{"fuse", "thread"}};
    for (size_t i = 0; i < fixed.size(); ++i)
      r.renderLoopAction(i, fixed);
    r.kernelsBefore.push_back({perBlock, 1, 1});
    // The second kernel: the payload's root (the split reduction itself when it was the root), the partials'
    // reduction among the producers its fusions take.
    bool rootIsReduction = r.payloadFacts.rootLoops > static_cast<int64_t>(r.payloadFacts.parallelSizes.size());
    if (!rootIsReduction)
      r.line("    transform.annotate %partials_sum \"kforge.producer\" : !transform.any_op");
    r.root = rootIsReduction ? "%partials_sum" : "%root";
    r.inner = "%func";
    r.facts = splitRowsFacts(r.payloadFacts, partials);
    r.producerAttr = "kforge.producer";
    r.leftoverPasses = true;
  }
};

/// Whether the payload has a convolution channels_last would copy (an NCHW input or an FCHW filter).
static bool channelsLastApplies(const PayloadFacts &facts) {
  return !facts.channelsLastMultiplicands.empty() &&
         facts.channelsLastMultiplicands.size() == facts.channelsLastShapes.size();
}

class ChannelsLastAction : public ActionDefinition {
public:
  ChannelsLastAction()
      : ActionDefinition(
            ActionSpec{
                "channels_last",
                "Copy a convolution's input and filter with their channels innermost (NCHW to NHWC, FCHW to FHWC: "
                "PyTorch's channels_last), each by a transpose kernel of its own (up to 8 x 8 elements a thread, "
                "16-byte vectors along both sides where the extents allow), and run the convolution on the copies: "
                "its implicit GEMM's K (the channels) is then contiguous in both, so its tiles are copied 16 bytes at "
                "a time (the tensor-core paths' cp.async and extra stages need it) instead of element by element. "
                "Costs a read and a write of each copied tensor. The actions after it schedule the convolution.",
                "transform.kforge.conv_channels_last on the convolution (once per copied operand), each transpose "
                "tiled (tile_using_forall, block and thread) and vectorized; each kernel's scf.forall mapped to a "
                "gpu.launch of its own",
                {},
                {"gpu", "cpu"},
                "first; a convolution read as an implicit GEMM whose channels are not the innermost dimension of its "
                "input or filter; on the GPU, stage (the implicit GEMM) after it"},
            {{"", 5}}) {}

  void validate(const ValidationContext &context) const override {
    if (!channelsLastApplies(context.facts))
      context.problem("precondition",
                      "channels_last needs a convolution read as an implicit GEMM whose channels are not the innermost "
                      "dimension of its input or filter (NCHW, FCHW); this payload has none");
    else if (context.facts.reductionOps != 1)
      context.problem("unsupported", "channels_last: the payload has reductions besides its convolution");
    else if (context.gpu && !findSlot(context.schedule, "stage"))
      context.problem("precondition", "channels_last on the GPU is for the implicit GEMM: it needs stage after it");
  }

  bool splitsKernels() const override { return true; }
  bool splitApplies(const PayloadFacts &facts) const override { return channelsLastApplies(facts); }
  bool needsImplicitGemmMark() const override { return true; }
  /// The convolution reading the copies: its tiles' copies those of the channels-last layout; a named root is a
  /// generic now.
  PayloadFacts splitFacts(const Action &, const PayloadFacts &facts) const override {
    PayloadFacts copied = facts;
    copied.implicitGemmVectorCopies = facts.channelsLastVectorCopies;
    copied.implicitGemmKMajor = facts.channelsLastKMajor;
    if (!facts.implicitGemm.empty() && facts.rootLoops > static_cast<int64_t>(facts.parallelSizes.size()))
      copied.rootOp = "linalg.generic";
    copied.channelsLastMultiplicands.clear();
    copied.channelsLastShapes.clear();
    return copied;
  }

  /// The copies, before the root is matched: the convolution may be the root, and it becomes a generic.
  void renderBeforeRoot(Renderer &r, const Action &action, std::vector<int> &starts) const override {
    starts[0] = r.nextLine();
    r.line("    // action 0: " + describe(action) + ": the convolution's operands copied channels-last, a kernel each");
    std::string conv = r.fresh("conv");
    r.line("    " + conv + " = transform.structured.match attributes{kforge.implicit_gemm} in %func : " + r.kUnary);
    for (auto [multiplicand, shape] :
         llvm::zip(r.payloadFacts.channelsLastMultiplicands, r.payloadFacts.channelsLastShapes)) {
      std::string next = r.fresh("conv"), transpose = r.fresh("transpose");
      r.line("    " + next + ", " + transpose + " = transform.kforge.conv_channels_last " + conv + " {multiplicand = " +
             std::to_string(multiplicand) + "} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)");
      r.renderTransposeKernel(transpose, shape);
      conv = next;
    }
  }

  void renderFirstKernel(Renderer &r, const Action &action, std::vector<int> &) const override {
    r.facts = splitFacts(action, r.payloadFacts);
  }
};

class TransposeBAction : public ActionDefinition {
public:
  TransposeBAction()
      : ActionDefinition(
            ActionSpec{"transpose_b",
                       "Copy a matmul's B (K x N, as torch.mm and A @ B read it) to N x K by a transpose kernel of its "
                       "own and run the matmul on the copy, read as nn.Linear reads its weight. TF32 wgmma reads both "
                       "operands K-major, so an fp32 A @ B reaches Hopper's TF32 wgmma forms with TMA (tf32) only "
                       "through the copy (without it, the cp.async stages transpose B element by element, or "
                       "mma.sync's TF32 form reads its B fragments element by element). Costs a read and a write of "
                       "B. The actions after it schedule the matmul.",
                       "transform.kforge.matmul_transpose_b on the matmul; the transpose tiled (tile_using_forall, "
                       "block and thread) and vectorized, its scf.forall mapped to a gpu.launch of its own",
                       {},
                       {"gpu"},
                       "first; one linalg.matmul, the payload's only reduction, reading A as M x K and B, an "
                       "argument of the function, as K x N"},
            {{"", 5}}) {}

  void validate(const ValidationContext &context) const override {
    if (!transposeBApplies(context.facts))
      context.problem("precondition",
                      "transpose_b needs one linalg.matmul (the payload's only reduction) reading A as M x K and B, "
                      "an argument of the function, as K x N; this payload has none");
  }

  bool splitsKernels() const override { return true; }
  /// (For the random and evolutionary policies: only where TF32 is allowed, the use it is for; on any
  /// other matmul the copy is pure cost, and half their schedules would start with it.)
  bool splitApplies(const PayloadFacts &facts) const override { return facts.allowTf32 && transposeBApplies(facts); }
  /// The matmul reading the copy: B as N x K.
  PayloadFacts splitFacts(const Action &, const PayloadFacts &facts) const override {
    PayloadFacts copied = facts;
    copied.contractionBTransposed = true;
    copied.contractionBFromArgument = false;
    return copied;
  }

  /// The copy, before the root is matched: the matmul may be the root, and it is replaced.
  void renderBeforeRoot(Renderer &r, const Action &action, std::vector<int> &starts) const override {
    starts[0] = r.nextLine();
    r.line("    // action 0: " + describe(action) + ": the matmul's B copied N x K, a kernel of its own");
    std::string matmul = r.fresh("matmul"), next = r.fresh("matmul"), transpose = r.fresh("transpose");
    r.line("    " + matmul + " = transform.structured.match ops{[\"linalg.matmul\"]} in %func : " + r.kUnary);
    r.line("    " + next + ", " + transpose + " = transform.kforge.matmul_transpose_b " + matmul +
           " : (!transform.any_op) -> (!transform.any_op, !transform.any_op)");
    const std::vector<int64_t> &mn = r.payloadFacts.contractionSizes;
    r.renderTransposeKernel(transpose, {mn[1], r.payloadFacts.contractionK});
  }

  void renderFirstKernel(Renderer &r, const Action &action, std::vector<int> &) const override {
    r.facts = splitFacts(action, r.payloadFacts);
  }
};

} // namespace

void kforge::tune::addKernelSplitActions(ActionDefinitions &definitions) {
  definitions.push_back(std::make_unique<SplitAction>());
  definitions.push_back(std::make_unique<SplitKAction>());
  definitions.push_back(std::make_unique<SplitRowsAction>());
  definitions.push_back(std::make_unique<ChannelsLastAction>());
  definitions.push_back(std::make_unique<TransposeBAction>());
}
