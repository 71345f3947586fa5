//===- KernelSplits.cpp - split and split_k: two kernels of one payload ----===//
//
// Both come first in a schedule; the actions after them schedule the op they leave to the first kernel (split:
// the contraction; split_k: the partial matmul over slices of K), and they render the second kernel themselves.
//
//===----------------------------------------------------------------------===//

#include "../ActionDefinition.h"
#include "../Renderer.h"
#include "../search/Search.h"

#include "llvm/ADT/STLExtras.h"

using namespace kforge::tune;

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
                "first; a contraction (linalg.matmul, linalg.batch_matmul) whose result feeds row reductions (a 2-D "
                "root or "
                "a row sum); lanes divides the row"},
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
      context.problem("precondition", "split needs a contraction whose result feeds row reductions (gemm + softmax, "
                                      "gemm + sigmoid + row sum); this payload has none");
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
    r.secondKernelDims = {split.value, 1, 1};
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
    std::vector<int64_t> parts;
    for (int64_t p : intParam()->values)
      if (facts.contractionK % p == 0 && facts.contractionK / p >= 512)
        parts.push_back(p);
    return parts;
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

} // namespace

void kforge::tune::addKernelSplitActions(ActionDefinitions &definitions) {
  definitions.push_back(std::make_unique<SplitAction>());
  definitions.push_back(std::make_unique<SplitKAction>());
}
