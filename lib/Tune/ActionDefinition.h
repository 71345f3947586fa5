//===- ActionDefinition.h - one definition per kind of action ----*- C++ -*-===//
//
// Each kind of action is one ActionDefinition: its spec (parameters and their domains, targets, docs), the
// slots it occupies in a schedule's canonical order, its checks against the payload, its rendering into the
// transform library and the values a search may give it. A family of kinds (tiling, rows, tensor cores,
// kernel attributes, kernel splits) lives in one file under lib/Tune/actions/; the registry is the list of
// every family's definitions (Registry.cpp), and the validator, renderer, mutators and docs/actions.md are
// loops over it.
//
// Adding an action: a definition in its family's file (or a new family registered in Registry.cpp), plus its
// tests.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TUNE_ACTIONDEFINITION_H
#define KFORGE_LIB_TUNE_ACTIONDEFINITION_H

#include "kforge/Tune/Actions.h"

#include "llvm/ADT/Twine.h"

#include <memory>
#include <optional>

namespace kforge::tune {

class Renderer;

/// A place in the canonical order: a kind with a `level` parameter has one slot per level.
struct Slot {
  std::string level; ///< Empty for kinds without a level.
  int phase;         ///< Position in the canonical order (smaller first).
};

/// What a definition's checks see: the schedule, the payload, the action at `index` and where to report.
class ValidationContext {
public:
  ValidationContext(const Schedule &schedule, const PayloadFacts &facts, bool gpu, size_t index,
                    std::vector<Problem> &problems)
      : schedule(schedule), facts(facts), gpu(gpu), index(index), problems(problems) {}

  const Action &action() const { return schedule[index]; }
  /// Whether the slot (kind, level) appears before this action.
  bool before(llvm::StringRef kind, llvm::StringRef level = "") const;
  void problem(llvm::StringRef code, const llvm::Twine &message) const;
  /// Reports at another action (a schedule-wide rule found while checking this one).
  void problemAt(int at, llvm::StringRef code, const llvm::Twine &message) const;

  const Schedule &schedule;
  const PayloadFacts &facts;
  const bool gpu;
  const size_t index;

private:
  std::vector<Problem> &problems;
};

/// Reports through a context as `problem(index, code, message)`, the form the checks shared by several actions
/// take.
struct ProblemSink {
  const ValidationContext &context;
  void operator()(int at, llvm::StringRef code, const llvm::Twine &message) const {
    context.problemAt(at, code, message);
  }
};

/// Where an action's fragment goes in the rendered library.
enum class RenderPoint {
  Loops,       ///< In schedule order, on the tensor payload (tiling, fusion, vectorization).
  AfterFinish, ///< After bufferization and the GPU mapping (rewrites of the mapped kernel, kernel attributes).
};

class ActionDefinition {
public:
  ActionDefinition(ActionSpec spec, std::vector<Slot> slots) : spec(std::move(spec)), slots(std::move(slots)) {}
  virtual ~ActionDefinition() = default;

  llvm::StringRef kind() const { return spec.kind; }
  /// The action's position in the canonical order (its slot's phase).
  int phase(const Action &action) const;
  /// The integer parameter, for kinds that have exactly one (it is Action::value).
  const ParamSpec *intParam() const;

  /// Why `value` is outside the domain of the integer parameter, if it is (the registry's values by default).
  virtual std::optional<std::string> outOfDomain(int64_t value) const;
  /// The parameters' domains against the payload (the integer parameter's by default).
  virtual void checkDomain(const ValidationContext &context) const;
  /// Domain checks across parameters, without the payload (parsing).
  virtual void checkParsed(const Action &action, int index, std::vector<Problem> &problems) const {}
  /// Checks against the payload and the rest of the schedule (after the generic ones: target, domain, order).
  virtual void validate(const ValidationContext &context) const {}

  virtual RenderPoint renderPoint() const { return RenderPoint::Loops; }
  /// Emits the action's fragment. Loops-point actions get a `// action N:` line before it from the driver;
  /// after-finish actions write their own (returning false when they render nothing: an option of another
  /// action's op).
  virtual bool render(Renderer &renderer, size_t index, const Schedule &schedule) const { return false; }

  /// The values a search may give the integer parameter on this payload (the registry's domain by default).
  virtual std::vector<int64_t> searchValues(const PayloadFacts &facts) const;

  /// The action as an option of the staged matmul_to_mma_sync op (ldmatrix, pipeline, wgmma, ...), or "".
  virtual std::string mmaOption(const Action &action) const { return ""; }
  /// The same for an option that depends on the schedule and the payload (multicast: which operand's tile is
  /// larger); by default mmaOption.
  virtual std::string mmaOptionIn(const Action &action, const Schedule &schedule, const PayloadFacts &facts) const {
    return mmaOption(action);
  }

  /// Kernel attributes (set_kernel_attributes on the gpu.launch): they need tile(block) and the finish.
  virtual bool actsOnKernel() const { return false; }

  /// Kernel splits (split, split_k, split_rows, channels_last: the schedule's first action, several kernels of
  /// the payload). The facts the actions after it act on; its fragments before the root is matched, before the
  /// scheduled op's actions and after them (its other kernels); whether the contraction's producers are marked
  /// apart from the second kernel's.
  virtual bool splitsKernels() const { return false; }
  virtual PayloadFacts splitFacts(const Action &action, const PayloadFacts &facts) const { return facts; }
  virtual bool marksContractionProducers() const { return false; }
  /// Whether the split applies to the payload, and whether it is for outputs too small to fill the GPU (it
  /// multiplies the blocks: a long shot elsewhere).
  virtual bool splitApplies(const PayloadFacts &facts) const { return false; }
  virtual bool multipliesBlocks() const { return false; }
  /// Before the payload's root is matched (its rewrite may replace the root): channels_last's transposes.
  virtual void renderBeforeRoot(Renderer &renderer, const Action &action, std::vector<int> &starts) const {}
  /// Whether the split's fragments find the convolution by the implicit-GEMM mark (rendered whatever follows).
  virtual bool needsImplicitGemmMark() const { return false; }
  virtual void renderFirstKernel(Renderer &renderer, const Action &action, std::vector<int> &starts) const {}
  virtual void renderSecondKernel(Renderer &renderer, const Action &action, std::vector<int> &starts) const {}

  const ActionSpec spec;
  const std::vector<Slot> slots;
};

using ActionDefinitions = std::vector<std::unique_ptr<ActionDefinition>>;

/// The families, each adding its definitions in registry order (lib/Tune/actions/*.cpp).
void addKernelSplitActions(ActionDefinitions &definitions);
void addTilingActions(ActionDefinitions &definitions);
void addRowActions(ActionDefinitions &definitions);
void addTensorCoreActions(ActionDefinitions &definitions);
void addKernelActions(ActionDefinitions &definitions);

/// Every definition, in registry order.
llvm::ArrayRef<std::unique_ptr<ActionDefinition>> actionDefinitions();
const ActionDefinition *findDefinition(llvm::StringRef kind);

/// The slots in canonical order, as "tile(block), fuse(block), ..." (`withSplits`: with split and split_k).
std::string canonicalOrderText(bool withSplits);

//===----------------------------------------------------------------------===//
// Helpers the families share
//===----------------------------------------------------------------------===//

std::string joinStrings(llvm::ArrayRef<std::string> items, llvm::StringRef separator);
std::string joinInts(llvm::ArrayRef<int64_t> values, llvm::StringRef separator);

/// A batch_matmul payload (its staged forms take one batch per block).
bool isBatchMatmul(const PayloadFacts &facts);
/// A tile's rows and columns of the matmul (a batch_matmul's batch extent dropped).
std::vector<int64_t> matmulTile(std::vector<int64_t> tile, const PayloadFacts &facts);
/// The row a lanes action spreads over its lanes, within the block (0 for other roots).
int64_t lanesRowWidth(const Schedule &schedule, const PayloadFacts &facts);
/// Whether the action is one of the kernel-attribute kinds (rendered on the gpu.launch after the finish).
bool actsOnKernel(const Action &action);
/// The action's definition (the action is a known kind: parsed or built by a policy).
const ActionDefinition &definitionOf(const Action &action);
/// Why a count of rows or blocks is outside an action's domain (the registry's values, or any count from 1 to
/// 65536), if it is: an outOfDomain for such counts.
std::optional<std::string> countOutOfDomain(const ActionDefinition &definition, int64_t value);

/// Shared memory a block may have on sm_90 (above 48 KB it is dynamic: the staged ops and the runtime see to it).
constexpr int64_t kMaxSharedBytesPerBlock = 227 * 1024;

} // namespace kforge::tune

#endif // KFORGE_LIB_TUNE_ACTIONDEFINITION_H
