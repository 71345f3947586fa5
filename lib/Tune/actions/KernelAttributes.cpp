//===- KernelAttributes.cpp - occupancy, max_registers, the cache actions, group_blocks -===//
//
// The actions on the mapped kernel as a whole: launch bounds for ptxas, the cache operators of its loads
// and stores, the order its blocks run in. Each renders one transform op on the gpu.launch after the finish
// (transform.kforge.set_kernel_attributes; group_blocks transform.kforge.group_block_order).
//
//===----------------------------------------------------------------------===//

#include "../ActionDefinition.h"
#include "../Renderer.h"

#include <optional>

using namespace kforge::tune;
using llvm::StringRef;

namespace {

/// A tensor-core block's accumulators: each consumer thread keeps rows x columns / threads f32 of the block's
/// tile in registers, beside about 32 of fragments and addresses.
struct TileAccumulators {
  int64_t threads, rows, cols;
  int64_t perThread() const { return rows * cols / threads; }
  int64_t registersNeeded() const { return perThread() + 32; }
  std::string describe() const {
    return "the " + std::to_string(perThread()) + " accumulators each of the block's " + std::to_string(threads) +
           " threads keeps of its " + std::to_string(rows) + "x" + std::to_string(cols) + " tile";
  }
};

/// The schedule's tensor-core accumulators (mma or wgmma), or nothing for the other forms.
std::optional<TileAccumulators> tensorCoreAccumulators(const ValidationContext &context) {
  if (!findSlot(context.schedule, "mma"))
    return std::nullopt;
  size_t m = matmulRowDim(context.facts);
  std::vector<int64_t> dims = blockDims(context.schedule, context.facts);
  int64_t threads = dims[0] * dims[1] * dims[2] - producerThreads(context.schedule);
  int64_t rows = blockExtent(context.schedule, context.facts, m),
          cols = blockExtent(context.schedule, context.facts, m + 1);
  if (threads <= 0 || rows <= 0 || cols <= 0 || rows * cols / threads <= 0)
    return std::nullopt;
  return TileAccumulators{threads, rows, cols};
}

class KernelAttributeAction : public ActionDefinition {
public:
  /// `bounds`: a launch bound (the kernel's registers), else an access policy; `attribute`: the op's attribute,
  /// with "=" and the integer parameter appended when the kind has one.
  KernelAttributeAction(ActionSpec spec, int phase, bool bounds, std::string attribute)
      : ActionDefinition(std::move(spec), {{"", phase}}), bounds(bounds), attribute(std::move(attribute)) {}

  bool actsOnKernel() const override { return true; }

  void validate(const ValidationContext &context) const override {
    checkKind(context);
    if (!context.before("tile", "block"))
      context.problem("precondition", context.action().kind + " needs tile(block) before it (it " +
                                          (bounds ? "bounds" : "acts on") + " the kernel of the grid)");
  }

  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    const Action &action = schedule[index];
    r.line("    // action " + std::to_string(index) + ": " + describe(action));
    std::string launches = r.matchLaunches();
    std::string text = intParam() ? attribute + " = " + std::to_string(action.value) : attribute;
    r.line("    " + r.fresh("bounded") + " = transform.kforge.set_kernel_attributes " + launches + " {" + text +
           "} : " + Renderer::kUnary);
    return true;
  }

protected:
  /// The kind's own checks, before the common one.
  virtual void checkKind(const ValidationContext &context) const {}

private:
  const bool bounds;
  const std::string attribute;
};

class MaxRegistersAction : public KernelAttributeAction {
public:
  MaxRegistersAction()
      : KernelAttributeAction(
            ActionSpec{"max_registers",
                       "Cap the registers per thread of the kernel (PTX .maxnreg).",
                       "transform.kforge.set_kernel_attributes {max_registers} on the gpu.launch, carried to the "
                       "outlined kernel "
                       "as nvvm.maxnreg",
                       {{"count", ParamType::Int, {32, 64, 96, 128, 168, 255}, {}, "registers per thread"}},
                       {"gpu"},
                       "tile(block)"},
            85, true, "max_registers") {}

protected:
  /// A register cap above what the block can launch with: ptxas honours .maxnreg over the block size, and a
  /// kernel of more registers than a multiprocessor has fails to launch. Checked on row kernels, whose block
  /// is exactly their lanes.
  void checkKind(const ValidationContext &context) const override {
    const Action &action = context.action();
    // The tensor-core forms keep each thread's share of the block's result in registers beside its fragments
    // and addresses: under that, ptxas stops ("insufficient registers"; seen with max_registers(64) and (128)
    // on a 128x256 TF32 wgmma block of 256 threads).
    if (std::optional<TileAccumulators> tile = tensorCoreAccumulators(context);
        tile && action.value < tile->registersNeeded())
      context.problem("shape", "max_registers(" + std::to_string(action.value) + ") leaves no room for " +
                                   tile->describe() + " (at least " + std::to_string(tile->registersNeeded()) +
                                   " registers)");
    if (!findSlot(context.schedule, "lanes"))
      return;
    std::vector<int64_t> dims = blockDims(context.schedule, context.facts);
    int64_t threads = dims[0] * dims[1] * dims[2];
    if (threads * action.value > 65536)
      context.problem("too-large", "max_registers(" + std::to_string(action.value) + ") lets a block of " +
                                       std::to_string(threads) + " threads take " +
                                       std::to_string(threads * action.value) +
                                       " registers; a multiprocessor has 65536 (the launch would fail)");
  }
};

/// occupancy(N): ptxas gives each thread at most 65536 / (N x the block's threads) registers, rounded down to 8.
class OccupancyAction : public KernelAttributeAction {
public:
  explicit OccupancyAction(ActionSpec spec) : KernelAttributeAction(std::move(spec), 80, true, "min_blocks_per_sm") {}

protected:
  /// Blocks that cannot share a multiprocessor's registers: ptxas stops ("insufficient registers"; the 4096^3
  /// TF32 search of session 67 spent 4 trials on occupancy(2) and (3) of 256x128 and 128x256 wgmma blocks).
  void checkKind(const ValidationContext &context) const override {
    const Action &action = context.action();
    std::optional<TileAccumulators> tile = tensorCoreAccumulators(context);
    if (!tile)
      return;
    std::vector<int64_t> dims = blockDims(context.schedule, context.facts);
    int64_t blockThreads = dims[0] * dims[1] * dims[2];
    int64_t perThread = 65536 / (action.value * blockThreads) / 8 * 8;
    if (perThread < tile->registersNeeded())
      context.problem("too-large", "occupancy(" + std::to_string(action.value) + ") leaves each of the " +
                                       std::to_string(blockThreads) + " threads of a block " +
                                       std::to_string(perThread) + " registers (65536 a multiprocessor), too few for " +
                                       tile->describe() + " (at least " + std::to_string(tile->registersNeeded()) +
                                       ")");
  }
};

class LoadsEvictFirstAction : public KernelAttributeAction {
public:
  LoadsEvictFirstAction()
      : KernelAttributeAction(
            ActionSpec{
                "loads_evict_first",
                "Load from the kernel's buffers with the L2 cache policy evict_first (createpolicy.fractional + "
                "ld.global.L2::cache_hint; a bulk copy into shared memory, pipeline_rows', with the policy as its L2 "
                "cache "
                "hint; not an L2 prefetch): data read once leaves L2 first. Measured on the H200 by the tuner "
                "(benchmark call 29): 6% faster on an 8192 x 8192 row sum over 1024 lanes (0.0661 against 0.0705 ms), "
                "the search's best; slower on the norms and softmax (e.g. softmax 0.0375 against 0.0363 ms), and on "
                "pipeline_rows' bulk copies of softmax 1024 x 32000 (call 35: 0.0790 against 0.0779 without a policy).",
                "transform.kforge.set_kernel_attributes {load_l2_policy = \"evict_first\"} on the gpu.launch; in the "
                "outlined kernel the loads from its arguments become inline PTX with the policy "
                "(kforge-l2-load-policy, "
                "kforge-gpu-module-to-binary)",
                {},
                {"gpu"},
                "tile(block); not with loads_evict_last"},
            89, false, "load_l2_policy = \"evict_first\"") {}

protected:
  void checkKind(const ValidationContext &context) const override {
    if (context.before("loads_evict_last", ""))
      context.problem("unsupported",
                      "loads_evict_first and loads_evict_last are two L2 policies for the same loads: choose one");
  }
};

/// group_blocks(N): the grid's blocks in groups of N block rows (transform.kforge.group_block_order).
class GroupBlocksAction : public ActionDefinition {
public:
  GroupBlocksAction()
      : ActionDefinition(
            ActionSpec{
                "group_blocks",
                "Run the grid's blocks in groups of this many block rows, column by column within a group, instead "
                "of row by row: the blocks resident at once then read a few rows of A's tiles and a fraction of "
                "B's columns, which L2 serves to each other, where row by row every wave reads all of B (on an "
                "8192^3 gemm of 256 x 128 tiles, 132 blocks at once: about 133 MB a wave instead of 280). What GEMM "
                "libraries call a swizzled or grouped tile order. A grid in clusters (multicast) is renumbered "
                "cluster by cluster. Not yet measured on a GPU.",
                "transform.kforge.group_block_order {rows} on the gpu.launch after the finish: its block ids x and y "
                "renumbered (a bijection of the grid)",
                {{"rows", ParamType::Int, {4, 8, 16}, {}, "block rows per group"}},
                {"gpu"},
                "tile(block) over at least two loops; not with persistent (its grid is not the tiles'); with "
                "multicast the clusters are renumbered, each kept whole"},
            {{"", 91}}) {}

  bool actsOnKernel() const override { return true; }

  void validate(const ValidationContext &context) const override {
    const Action *block = findSlot(context.schedule, "tile", "block");
    if (!block) {
      context.problem("precondition", "group_blocks needs tile(block) before it (it orders the grid's blocks)");
      return;
    }
    if (findSlot(context.schedule, "persistent"))
      context.problem("unsupported", "group_blocks with persistent: the persistent grid is not the tiles' (each "
                                     "block loops over tiles in its own order)");
    int64_t tiledLoops = 0;
    for (size_t d = 0; d < context.facts.parallelSizes.size(); ++d)
      tiledLoops += blockExtent(context.schedule, context.facts, d) < context.facts.parallelSizes[d];
    if (tiledLoops < 2)
      context.problem("shape", "group_blocks orders a grid of block rows and columns; tile(block) leaves " +
                                   std::to_string(tiledLoops) + " loop(s) with more than one block");
  }

  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  bool render(Renderer &r, size_t index, const Schedule &schedule) const override {
    const Action &action = schedule[index];
    r.line("    // action " + std::to_string(index) + ": " + describe(action));
    std::string launches = r.matchLaunches();
    r.line("    " + r.fresh("grouped") + " = transform.kforge.group_block_order " + launches +
           " {rows = " + std::to_string(action.value) + "} : " + Renderer::kUnary);
    return true;
  }
};

} // namespace

void kforge::tune::addKernelActions(ActionDefinitions &definitions) {
  definitions.push_back(std::make_unique<OccupancyAction>(ActionSpec{
      "occupancy",
      "Ask the kernel's compiler to fit this many blocks on a multiprocessor (PTX .minnctapersm): ptxas limits "
      "each thread's registers to make room, trading spills for occupancy.",
      "transform.kforge.set_kernel_attributes {min_blocks_per_sm} on the gpu.launch, carried to the outlined "
      "kernel as nvvm.minctasm",
      {{"min_blocks_per_sm", ParamType::Int, {1, 2, 3, 4}, {}, "blocks per multiprocessor"}},
      {"gpu"},
      "tile(block) (the grid it maps to is the kernel it bounds)"}));
  definitions.push_back(std::make_unique<MaxRegistersAction>());
  definitions.push_back(std::make_unique<KernelAttributeAction>(
      ActionSpec{
          "streaming_stores",
          "Give every global store of the kernel the evict-first cache operator (.cs): output written once and "
          "never read back leaves L2 first, which keeps room for the lines still to be read. Measured on the H200 "
          "with the stores of call 23's best row kernels written as st.global.cs in cache_hints.py's harness (calls "
          "25-26): 1.6-5% faster on 4096-wide layernorm and RMS norm; by the tuner (call 27) under 0.5%.",
          "transform.kforge.set_kernel_attributes {streaming_stores} on the gpu.launch; the outlined kernel's "
          "module is assembled by ptxas with -dscm=cs (kforge-streaming-stores)",
          {},
          {"gpu"},
          "tile(block)"},
      86, false, "streaming_stores"));
  definitions.push_back(std::make_unique<KernelAttributeAction>(
      ActionSpec{
          "read_only_inputs",
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
      87, false, "read_only_inputs"));
  definitions.push_back(std::make_unique<KernelAttributeAction>(
      ActionSpec{
          "loads_evict_last",
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
      88, false, "load_l2_policy = \"evict_last\""));
  definitions.push_back(std::make_unique<LoadsEvictFirstAction>());
  definitions.push_back(std::make_unique<GroupBlocksAction>());
}
