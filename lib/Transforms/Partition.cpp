//===- Partition.cpp - a function of many linalg ops into dispatch functions ===//
//
// See the pass description in Passes.td. The grouping works on the function's top-level ops in program
// order. Each compute op (a linalg op that is not a fill, or any other op with tensor results) either joins
// the group of its latest producer, when the group can take it, or starts a group. Joining only the latest
// producer's group keeps the groups in a topological order: every operand of a group comes from a function
// argument or from an earlier group, so the entry can call the groups in the order they were formed.
//
// Which ops a group takes decides only how fast the kernels can be, never what they compute: each dispatch
// is a function of its operands, compiled and verified on its own.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"
#include "kforge/Transforms/WindowOps.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>

namespace kforge {
#define GEN_PASS_DEF_KFORGEPARTITION
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {

/// What a group is formed around.
enum class GroupKind {
  Contraction, // a matmul / batch matmul / convolution with the elementwise ops on its result (epilogue)
  Rows,        // reductions over one set of rows and the elementwise ops over the same loops
  Opaque,      // an op kforge does not group (tensor.pad, tensor.concat, ...): alone
};

struct Group {
  GroupKind kind;
  SmallVector<Operation *> ops;
  SmallVector<int64_t> domain; // contraction: its result's shape; rows: the loops of the full-size ops
  SmallVector<int64_t> rows;   // rows: the parallel loops of the reductions (once one joins: `reduces`)
  bool reduces = false;        // rows: a reduction has joined (its rows may be none: a whole-tensor sum)
};

/// Ops that only view their operand's data: reshapes of contiguous tensors, and slices with static offsets,
/// sizes and strides (torch's split and chunk). Between dispatches they are steps of the plan, not kernels.
bool isReshape(Operation *op) {
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return slice.getOffsets().empty() && slice.getSizes().empty() && slice.getStrides().empty();
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(op);
}

/// Ops every dispatch that needs them gets its own copy of: constants, empty tensors, fills of those, and
/// pure scalar arithmetic on them. They carry no data a kernel computes.
bool isMaterializable(Operation *op) {
  if (!op)
    return false;
  if (isa<arith::ConstantOp, tensor::EmptyOp>(op))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return llvm::all_of(fill->getOperands(), [](Value v) { return isMaterializable(v.getDefiningOp()); });
  if (op->getNumRegions() == 0 && isPure(op) && op->getNumResults() == 1 &&
      !isa<ShapedType>(op->getResult(0).getType()) && op->getDialect() &&
      isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return llvm::all_of(op->getOperands(), [](Value v) { return isMaterializable(v.getDefiningOp()); });
  return false;
}

/// The value a chain of reshapes starts from.
Value throughReshapes(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isReshape(op))
      break;
    value = op->getOperand(0);
  }
  return value;
}

/// `op` reads a tensor that an op of `group` reads too (the same value, or the same reshape of one: importers
/// reshape an argument anew for each use).
/// `a` and `b` hold the same data: reshapes of one contiguous tensor to the same type are the same row-major
/// reinterpretation (slices are not: the same type at other offsets).
bool sameData(Value a, Value b) {
  auto root = [](Value v) {
    while (Operation *op = v.getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(op))
        break;
      v = op->getOperand(0);
    }
    return v;
  };
  return a == b || (a.getType() == b.getType() && root(a) == root(b));
}

bool sharesInput(const Group &group, Operation *op) {
  auto same = sameData;
  for (Operation *member : group.ops)
    for (Value operand : member->getOperands())
      if (isa<TensorType>(operand.getType()) &&
          llvm::any_of(op->getOperands(), [&](Value other) { return same(operand, other); }))
        return true;
  return false;
}

bool isContraction(linalg::LinalgOp op) { return linalg::isaContractionOpInterface(op) || kforge::isWindowOp(op); }

bool allParallel(linalg::LinalgOp op) { return op.getNumReductionLoops() == 0; }

SmallVector<int64_t> parallelRanges(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges;
  for (auto [range, iterator] : llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
    if (iterator == utils::IteratorType::parallel)
      ranges.push_back(range);
  return ranges;
}

class Partitioner {
public:
  explicit Partitioner(func::FuncOp entry) : entry(entry) {}

  /// Forms the groups; fails on a function whose shape it cannot partition (with an error on the op).
  LogicalResult formGroups();
  /// Cuts every group of rows whose values leave it from more than one op (see the definition).
  void separateResults();
  /// Outlines each group into a private function next to the entry and rewrites the entry as calls.
  LogicalResult outline(SmallVectorImpl<func::FuncOp> &dispatches);

private:
  std::optional<unsigned> groupOf(Value value) const {
    Operation *op = throughReshapes(value).getDefiningOp();
    auto it = op ? groupIndex.find(op) : groupIndex.end();
    if (it == groupIndex.end())
      return std::nullopt;
    return it->second;
  }
  bool canJoin(const Group &group, unsigned index, linalg::LinalgOp op) const;
  bool initializes(const Group &group, unsigned index, linalg::LinalgOp contraction);
  void join(unsigned index, linalg::LinalgOp op);
  void start(Operation *op);
  /// Whether a result of `op` is read outside `members` (through any reshapes), or returned.
  bool leaves(Operation *op, const DenseSet<Operation *> &members);
  Operation *topLevelAncestor(Operation *op) {
    while (op && op->getBlock() != &entry.getBody().front())
      op = op->getParentOp();
    return op;
  }
  /// The value of `value` in the block being built, materialising constants and reshapes on demand.
  Value materialize(Value value, IRMapping &mapping, OpBuilder &builder);

  func::FuncOp entry;
  SmallVector<Group> groups;
  DenseMap<Operation *, unsigned> groupIndex;
};

bool Partitioner::canJoin(const Group &group, unsigned index, linalg::LinalgOp op) const {
  // Every operand computed in the group must be read through the identity map when the shapes match the
  // group's domain: a transpose or a broadcast of a group's result starts a kernel of its own.
  auto inGroup = [&](Value v) { return groupOf(v) == index; };
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  switch (group.kind) {
  case GroupKind::Opaque:
    return false;
  case GroupKind::Contraction: {
    if (!allParallel(op) || loops != group.domain)
      return false;
    // An epilogue keeps the contraction's precision or narrows it (bias, activation, a cast to bf16). A result
    // wider than the accumulator, or than the group's value it reads, is a statistic's start (torch-mlir's
    // layernorm extends its input to f64 in an f32 model, and a bf16 residual to f32 in a bf16 one): it
    // belongs to the row kernel that reduces it. Kept here, it would be a second result of the contraction's
    // kernel that no schedule of the contraction maps to the GPU, and f64 between kernels is nothing the runner
    // verifies.
    auto width = [](Value v) { return getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth(); };
    // (The contraction's result: a group it joined as the init's consumer starts with the init's ops.)
    Operation *contraction = *llvm::find_if(group.ops, [](Operation *member) {
      auto linalgMember = dyn_cast<linalg::LinalgOp>(member);
      return linalgMember && isContraction(linalgMember);
    });
    unsigned narrowest = width(contraction->getResult(0));
    for (OpOperand *input : op.getDpsInputOperands())
      if (inGroup(input->get()))
        narrowest = std::min(narrowest, width(input->get()));
    for (Value result : op->getResults())
      if (width(result) > narrowest)
        return false;
    if (!op.getDpsInitsMutable().empty() && !op.getMatchingIndexingMap(&op.getDpsInitsMutable()[0]).isIdentity())
      return false;
    for (OpOperand *input : op.getDpsInputOperands())
      if (inGroup(input->get()) && !op.getMatchingIndexingMap(input).isIdentity())
        return false;
    return true;
  }
  case GroupKind::Rows: {
    if (allParallel(op)) {
      // Over the full loops (an elementwise op of the rows' elements) or over the rows (of their statistics).
      if (loops != group.domain && (!group.reduces || loops != group.rows))
        return false;
      if (loops == group.domain)
        for (OpOperand *input : op.getDpsInputOperands())
          if (inGroup(input->get()) && cast<ShapedType>(input->get().getType()).getShape() ==
                                           ArrayRef<int64_t>(group.domain) &&
              !op.getMatchingIndexingMap(input).isIdentity())
            return false;
      return true;
    }
    // A reduction: over the same loops, and the same rows as the group's other reductions.
    if (loops != group.domain || (group.reduces && parallelRanges(op) != group.rows))
      return false;
    // Its elements through the identity map; the rows' statistics (the mean a variance subtracts) any way.
    for (OpOperand *input : op.getDpsInputOperands())
      if (inGroup(input->get()) &&
          cast<ShapedType>(input->get().getType()).getShape() == ArrayRef<int64_t>(group.domain) &&
          !op.getMatchingIndexingMap(input).isIdentity())
        return false;
    return true;
  }
  }
  return false;
}

/// Whether `group` (the latest of `contraction`'s producers) only computes `contraction`'s init: elementwise ops
/// over the contraction's result shape (the bias torch-mlir broadcasts into a convolution's or a Linear's init)
/// whose values nothing else reads. Then the contraction joins it: split off, the init would be a dispatch's
/// argument that the contraction's kernel accumulates into in place (a buffer both read and written, which the
/// runner poisons as an output), and an extra write and read of the result's size; kept, the schedules take the
/// init into the accumulators (the implicit GEMM's and the staged SGEMM's init ops).
bool Partitioner::initializes(const Group &group, unsigned index, linalg::LinalgOp contraction) {
  if (group.kind != GroupKind::Rows || group.reduces || contraction.getNumDpsInits() != 1 ||
      contraction->getNumResults() != 1)
    return false;
  ArrayRef<int64_t> shape = cast<ShapedType>(contraction->getResult(0).getType()).getShape();
  if (ArrayRef<int64_t>(group.domain) != shape || groupOf(contraction.getDpsInits()[0]) != index)
    return false;
  for (OpOperand *input : contraction.getDpsInputOperands())
    if (groupOf(input->get()) == index)
      return false;
  Operation *init = throughReshapes(contraction.getDpsInits()[0]).getDefiningOp();
  for (Operation *member : group.ops)
    for (Operation *user : member->getUsers()) {
      Operation *reader = topLevelAncestor(user);
      if (reader != contraction.getOperation() && !llvm::is_contained(group.ops, reader))
        return false;
      if (reader == contraction.getOperation() && member != init)
        return false;
    }
  return true;
}

void Partitioner::join(unsigned index, linalg::LinalgOp op) {
  Group &group = groups[index];
  group.ops.push_back(op);
  groupIndex[op] = index;
  if (group.kind == GroupKind::Rows && !allParallel(op) && !group.reduces) {
    group.rows = parallelRanges(op);
    group.reduces = true;
  }
}

void Partitioner::start(Operation *op) {
  Group group;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics()) {
    group.kind = GroupKind::Opaque;
  } else if (isContraction(linalgOp)) {
    group.kind = GroupKind::Contraction;
    group.domain = llvm::to_vector(cast<ShapedType>(op->getResult(0).getType()).getShape());
  } else {
    group.kind = GroupKind::Rows;
    group.domain = linalgOp.getStaticLoopRanges();
    if (!allParallel(linalgOp)) {
      group.rows = parallelRanges(linalgOp);
      group.reduces = true;
    }
  }
  group.ops.push_back(op);
  groupIndex[op] = groups.size();
  groups.push_back(std::move(group));
}

LogicalResult Partitioner::formGroups() {
  for (Operation &op : entry.getBody().front().without_terminator()) {
    if (isMaterializable(&op) || isReshape(&op))
      continue;
    if (op.getNumResults() == 0 || !llvm::all_of(op.getResultTypes(), [](Type t) { return isa<TensorType>(t); }))
      return op.emitOpError("kforge-partition: a top-level op without tensor results (")
             << op.getName() << ") cannot be placed in a dispatch";
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    std::optional<unsigned> latest;
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (std::optional<unsigned> producer = groupOf(operand))
          latest = latest ? std::max(*latest, *producer) : *producer;
    });
    if (linalgOp && linalgOp.hasPureTensorSemantics() && !isContraction(linalgOp)) {
      if (latest && canJoin(groups[*latest], *latest, linalgOp)) {
        join(*latest, linalgOp);
        continue;
      }
      // A sibling: the last group (every producer is in it or before it) when it is a group of rows that
      // reads one of the same tensors (layernorm's mean and variance of the same input).
      unsigned last = groups.size() - 1;
      if (!groups.empty() && groups.back().kind == GroupKind::Rows && sharesInput(groups.back(), &op) &&
          canJoin(groups.back(), last, linalgOp)) {
        join(last, linalgOp);
        continue;
      }
    }
    // A contraction whose init the latest group computes and nothing else reads: the group becomes its.
    if (linalgOp && linalgOp.hasPureTensorSemantics() && isContraction(linalgOp) && latest &&
        initializes(groups[*latest], *latest, linalgOp)) {
      Group &group = groups[*latest];
      group.kind = GroupKind::Contraction;
      group.domain = llvm::to_vector(cast<ShapedType>(op.getResult(0).getType()).getShape());
      group.ops.push_back(&op);
      groupIndex[&op] = *latest;
      continue;
    }
    start(&op);
  }
  return success();
}

bool Partitioner::leaves(Operation *op, const DenseSet<Operation *> &members) {
  SmallVector<Operation *> users(op->getUsers().begin(), op->getUsers().end());
  while (!users.empty()) {
    Operation *user = topLevelAncestor(users.pop_back_val());
    if (user && isReshape(user) && !members.contains(user))
      users.append(user->getUsers().begin(), user->getUsers().end());
    else if (!user || !members.contains(user))
      return true;
  }
  return false;
}

/// A dispatch's results are one op's (Passes.td): kforge-tune schedules the op behind the first returned value,
/// so a second op whose values leave (triplet margin's sibling distances, cross entropy's row max beside its sum
/// of exponentials) stayed outside every kernel and no GPU proposal compiled. Cut after the first leaving op.
void Partitioner::separateResults() {
  SmallVector<Group> separated;
  std::function<void(ArrayRef<Operation *>)> cut = [&](ArrayRef<Operation *> ops) {
    DenseSet<Operation *> members(ops.begin(), ops.end());
    auto leaving =
        llvm::make_filter_range(llvm::seq<size_t>(0, ops.size()), [&](size_t i) { return leaves(ops[i], members); });
    if (std::distance(leaving.begin(), leaving.end()) <= 1) {
      separated.push_back(Group{GroupKind::Rows, SmallVector<Operation *>(ops), {}, {}, false});
      return;
    }
    cut(ops.take_front(*leaving.begin() + 1));
    cut(ops.drop_front(*leaving.begin() + 1));
  };
  for (Group &group : groups) {
    if (group.kind == GroupKind::Rows && group.ops.size() > 1)
      cut(group.ops);
    else
      separated.push_back(std::move(group));
  }
  groups = std::move(separated);
  groupIndex.clear();
  for (auto [index, group] : llvm::enumerate(groups))
    for (Operation *op : group.ops)
      groupIndex[op] = index;
}

Value Partitioner::materialize(Value value, IRMapping &mapping, OpBuilder &builder) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  assert(def && (isMaterializable(def) || isReshape(def)) && "only constants and reshapes are rebuilt");
  for (Value operand : def->getOperands())
    materialize(operand, mapping, builder);
  Operation *copy = builder.clone(*def, mapping);
  return copy->getResult(cast<OpResult>(value).getResultNumber());
}

LogicalResult Partitioner::outline(SmallVectorImpl<func::FuncOp> &dispatches) {
  Block &body = entry.getBody().front();
  MLIRContext *context = entry.getContext();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());

  // The values each group takes and gives.
  SmallVector<SetVector<Value>> inputs(groups.size()), outputs(groups.size());
  for (auto [index, group] : llvm::enumerate(groups)) {
    DenseSet<Operation *> members(group.ops.begin(), group.ops.end());
    for (Operation *op : group.ops) {
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (def && (members.contains(def) || def->getParentOp() != entry.getOperation() ||
                      isMaterializable(def)))
            continue;
          if (!def && cast<BlockArgument>(operand).getOwner() != &body)
            continue; // a region's own block argument
          if (!isa<TensorType>(operand.getType()))
            return (void)op->emitOpError("kforge-partition: reads a scalar computed outside any dispatch");
          // A reshape of this group's own result is rebuilt inside; any other value is an operand.
          Value root = throughReshapes(operand);
          if (root.getDefiningOp() && members.contains(root.getDefiningOp()))
            continue;
          // One argument for the same data reshaped alike at each use (importers reshape per use).
          if (llvm::none_of(inputs[index], [&](Value input) { return sameData(input, operand); }))
            inputs[index].insert(operand);
        }
      });
      for (Value result : op->getResults())
        for (OpOperand &use : result.getUses()) {
          Operation *user = topLevelAncestor(use.getOwner());
          if (!members.contains(user)) {
            outputs[index].insert(result);
            break;
          }
        }
    }
  }
  for (Value returned : returnOp.getOperands()) {
    Operation *def = returned.getDefiningOp();
    if (def && isMaterializable(def))
      return returnOp.emitOpError("kforge-partition: returns a constant tensor; no dispatch computes it");
  }

  // One private function per group, next to the entry.
  OpBuilder moduleBuilder(context);
  moduleBuilder.setInsertionPoint(entry);
  for (auto [index, group] : llvm::enumerate(groups)) {
    SmallVector<Type> argumentTypes, resultTypes;
    for (Value v : inputs[index])
      argumentTypes.push_back(v.getType());
    for (Value v : outputs[index])
      resultTypes.push_back(v.getType());
    auto dispatch = func::FuncOp::create(moduleBuilder, group.ops.front()->getLoc(),
                                         (entry.getSymName() + "_dispatch_" + Twine(index)).str(),
                                         FunctionType::get(context, argumentTypes, resultTypes));
    Block *block = dispatch.addEntryBlock();
    OpBuilder builder = OpBuilder::atBlockBegin(block);
    IRMapping mapping;
    for (auto [value, argument] : llvm::zip(inputs[index], block->getArguments()))
      mapping.map(value, argument);
    // The other reshapes of an argument's data read that argument.
    for (Operation *op : group.ops)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (!mapping.contains(operand))
            for (auto [value, argument] : llvm::zip(inputs[index], block->getArguments()))
              if (sameData(value, operand))
                mapping.map(operand, argument);
      });
    DenseSet<Operation *> members(group.ops.begin(), group.ops.end());
    for (Operation *op : group.ops) {
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def || mapping.contains(operand) || members.contains(def) || def->getParentOp() != entry.getOperation())
            continue;
          materialize(operand, mapping, builder);
        }
      });
      builder.clone(*op, mapping);
    }
    SmallVector<Value> results;
    for (Value v : outputs[index])
      results.push_back(mapping.lookup(v));
    func::ReturnOp::create(builder, dispatch.getLoc(), results);
    dispatch.setPrivate();
    dispatches.push_back(dispatch);
  }

  // The entry: the calls in group order, the reshapes between them, and the same results.
  Block *newBody = new Block();
  entry.getBody().push_back(newBody); // after the old body, which is erased below
  for (BlockArgument argument : body.getArguments())
    newBody->addArgument(argument.getType(), argument.getLoc());
  IRMapping mapping;
  for (auto [old, fresh] : llvm::zip(body.getArguments(), newBody->getArguments()))
    mapping.map(old, fresh);
  OpBuilder builder = OpBuilder::atBlockBegin(newBody);
  for (auto [index, group] : llvm::enumerate(groups)) {
    SmallVector<Value> operands;
    for (Value v : inputs[index])
      operands.push_back(materialize(v, mapping, builder));
    auto call = func::CallOp::create(builder, group.ops.front()->getLoc(), dispatches[index], operands);
    for (auto [old, fresh] : llvm::zip(outputs[index], call.getResults()))
      mapping.map(old, fresh);
  }
  SmallVector<Value> returned;
  for (Value v : returnOp.getOperands())
    returned.push_back(materialize(v, mapping, builder));
  func::ReturnOp::create(builder, returnOp.getLoc(), returned);

  // Swap the bodies: drop the old ops' uses first (later ops use earlier ones).
  for (Operation &op : llvm::reverse(body))
    op.dropAllUses();
  body.erase();
  return success();
}

} // namespace

/// A name fixed by a dispatch's content (not its name or visibility), so identical kernels across a model are
/// one function, tuned once, and found again in a tuning database (kforge-apply-tuned).
std::string kforge::dispatchContentName(func::FuncOp dispatch) {
  StringAttr name = dispatch.getSymNameAttr();
  SymbolTable::Visibility visibility = dispatch.getVisibility();
  dispatch.setSymName("dispatch");
  dispatch.setVisibility(SymbolTable::Visibility::Private);
  std::string text;
  llvm::raw_string_ostream os(text);
  dispatch->print(os, OpPrintingFlags().printGenericOpForm().enableDebugInfo(false).useLocalScope());
  dispatch.setSymNameAttr(name);
  dispatch.setVisibility(visibility);
  std::string hash = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)), /*LowerCase=*/true);
  return "k_" + hash.substr(0, 16);
}

namespace {

llvm::json::Array shapeOf(Type type) {
  llvm::json::Array shape;
  for (int64_t size : cast<ShapedType>(type).getShape())
    shape.push_back(size);
  return shape;
}

std::string elementTypeOf(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  cast<ShapedType>(type).getElementType().print(os);
  return text;
}

llvm::json::Object valueJson(Type type) {
  return llvm::json::Object{{"shape", shapeOf(type)}, {"element_type", elementTypeOf(type)}};
}

LogicalResult writeFile(Operation *anchor, StringRef path, StringRef text) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return anchor->emitError("kforge-partition: cannot write ") << path << ": " << error.message();
  os << text;
  return success();
}

/// Rows with batch dimensions (attention's softmax over 32 x 2048 rows of 2048) as rows of one dimension, so
/// the row kernels' schedules (which take [rows, columns]) apply: in a dispatch without contractions that
/// reduces rows, every generic whose leading parallel loops (those before the first reduction; all but the
/// last of an elementwise op) are contiguous in all its maps gets them collapsed into one; the reshapes between
/// the collapsed ops fold away. All or none: where one such generic cannot be collapsed (a GroupNorm's affine
/// reads its per-channel scale along the second batch loop alone), collapsing the others would leave reshapes
/// between a row statistic and its consumer, which no fusion crosses.
void collapseBatchRows(func::FuncOp dispatch) {
  bool contraction = false, rowsReduced = false;
  dispatch.walk([&](linalg::LinalgOp op) {
    contraction |= isContraction(op);
    rowsReduced |= op.getNumReductionLoops() > 0;
  });
  if (contraction || !rowsReduced)
    return;
  SmallVector<std::pair<linalg::GenericOp, ReassociationIndices>> generics;
  bool allCollapse = true;
  dispatch.walk([&](linalg::GenericOp op) {
    if (!op.hasPureTensorSemantics())
      return;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    int64_t leading = 0;
    while (leading < static_cast<int64_t>(iterators.size()) && iterators[leading] == utils::IteratorType::parallel)
      ++leading;
    int64_t folded = leading == static_cast<int64_t>(iterators.size()) ? leading - 1 : leading;
    if (folded < 2)
      return;
    ReassociationIndices batch = llvm::to_vector(llvm::seq<int64_t>(0, folded));
    if (linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {batch}))
      generics.push_back({op, batch});
    else
      allCollapse = false;
  });
  if (generics.empty() || !allCollapse)
    return;
  IRRewriter rewriter(dispatch.getContext());
  for (auto &[op, batch] : generics) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::CollapseResult> result = linalg::collapseOpIterationDims(op, {batch}, rewriter);
    if (succeeded(result))
      rewriter.replaceOp(op, result->results);
  }
  RewritePatternSet patterns(dispatch.getContext());
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, dispatch.getContext());
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, dispatch.getContext());
  (void)applyPatternsGreedily(dispatch, std::move(patterns));
}

/// A dispatch's boundary reshapes moved to its callers (where they are views between kernels): an argument
/// read only through one collapse_shape becomes the collapsed tensor, a result returned through an
/// expand_shape becomes the unexpanded one. Schedules match the ops that produce a function's results.
void sinkBoundaryReshapes(func::FuncOp dispatch, func::FuncOp entry) {
  SmallVector<func::CallOp> calls;
  entry.walk([&](func::CallOp call) {
    if (call.getCallee() == dispatch.getSymName())
      calls.push_back(call);
  });
  Block &body = dispatch.getBody().front();
  for (BlockArgument argument : body.getArguments()) {
    if (argument.use_empty())
      continue;
    auto first = dyn_cast<tensor::CollapseShapeOp>(*argument.getUsers().begin());
    if (!first || !llvm::all_of(argument.getUsers(), [&](Operation *user) {
          auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
          return collapse && collapse.getType() == first.getType() &&
                 collapse.getReassociationIndices() == first.getReassociationIndices();
        }))
      continue;
    SmallVector<ReassociationIndices> reassociation = first.getReassociationIndices();
    argument.setType(first.getType());
    for (Operation *user : llvm::make_early_inc_range(argument.getUsers())) {
      user->getResult(0).replaceAllUsesWith(argument);
      user->erase();
    }
    for (func::CallOp call : calls) {
      OpBuilder builder(call);
      Value operand = call.getOperand(argument.getArgNumber());
      call.setOperand(argument.getArgNumber(),
                      tensor::CollapseShapeOp::create(builder, call.getLoc(), operand, reassociation));
    }
  }
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<std::optional<SmallVector<ReassociationIndices>>> expanded(returnOp.getNumOperands());
  for (OpOperand &returned : returnOp->getOpOperands()) {
    auto expand = returned.get().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || !expand.getType().hasStaticShape())
      continue;
    expanded[returned.getOperandNumber()] = expand.getReassociationIndices();
    returned.set(expand.getSrc());
    if (expand->use_empty())
      expand->erase();
  }
  dispatch.setType(FunctionType::get(dispatch.getContext(), body.getArgumentTypes(), returnOp.getOperandTypes()));
  for (func::CallOp call : calls) {
    OpBuilder builder(call);
    auto fresh = func::CallOp::create(builder, call.getLoc(), dispatch, call.getOperands());
    builder.setInsertionPointAfter(fresh);
    for (auto [index, old] : llvm::enumerate(call.getResults())) {
      Value value = fresh.getResult(index);
      if (expanded[index])
        value = tensor::ExpandShapeOp::create(builder, call.getLoc(), old.getType(), value, *expanded[index]);
      old.replaceAllUsesWith(value);
    }
    call.erase();
  }
}

/// Writes each dispatch as a payload of its own (a module with it as the one public function) and
/// plan.json: the entry's steps (dispatch calls and reshapes) in order, over numbered values.
LogicalResult writeSplit(ModuleOp module, func::FuncOp entry, StringRef directory) {
  if (std::error_code error = llvm::sys::fs::create_directories(directory))
    return module.emitError("kforge-partition: cannot create ") << directory << ": " << error.message();
  llvm::json::Array arguments, steps, dispatchesJson, outputs;
  DenseMap<Value, int64_t> numbers; // value -> index into "values"
  llvm::json::Array values;
  auto number = [&](Value v, llvm::json::Object origin) {
    origin["shape"] = shapeOf(v.getType());
    origin["element_type"] = elementTypeOf(v.getType());
    numbers[v] = values.size();
    values.push_back(std::move(origin));
  };
  for (BlockArgument argument : entry.getArguments()) {
    if (!isa<RankedTensorType>(argument.getType()))
      return entry.emitError("kforge-partition: argument ") << argument.getArgNumber() << " is not a ranked tensor";
    arguments.push_back(valueJson(argument.getType()));
    number(argument, llvm::json::Object{{"argument", static_cast<int64_t>(argument.getArgNumber())}});
  }
  llvm::StringMap<int64_t> dispatchIndex;
  for (Operation &op : entry.getBody().front()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      StringRef callee = call.getCallee();
      if (!dispatchIndex.count(callee)) {
        auto dispatch = module.lookupSymbol<func::FuncOp>(callee);
        OwningOpRef<ModuleOp> payload = ModuleOp::create(UnknownLoc::get(module.getContext()));
        auto copy = cast<func::FuncOp>(dispatch->clone());
        copy.setPublic();
        payload->getBody()->push_back(copy);
        std::string text;
        llvm::raw_string_ostream os(text);
        payload->print(os);
        SmallString<256> path(directory);
        llvm::sys::path::append(path, (callee + ".mlir").str());
        if (failed(writeFile(module, path, text)))
          return failure();
        dispatchIndex[callee] = dispatchesJson.size();
        dispatchesJson.push_back(llvm::json::Object{{"name", callee}, {"payload", (callee + ".mlir").str()}});
      }
      llvm::json::Array operands, results;
      for (Value operand : call.getOperands())
        operands.push_back(numbers.lookup(operand));
      for (Value result : call.getResults()) {
        results.push_back(static_cast<int64_t>(values.size()));
        number(result, llvm::json::Object{{"step", static_cast<int64_t>(steps.size())}});
      }
      steps.push_back(llvm::json::Object{{"kind", "dispatch"}, {"dispatch", dispatchIndex[callee]},
                                         {"operands", std::move(operands)}, {"results", std::move(results)}});
    } else if (isReshape(&op)) {
      int64_t source = numbers.lookup(op.getOperand(0));
      int64_t result = values.size();
      number(op.getResult(0), llvm::json::Object{{"step", static_cast<int64_t>(steps.size())}});
      llvm::json::Object step{{"kind", "reshape"}, {"operands", llvm::json::Array{source}},
                              {"results", llvm::json::Array{result}}};
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
        // The source's elements at offsets + i * strides, i < sizes; then reshaped to the result's shape
        // (a rank-reducing slice drops unit dimensions).
        auto array = [](ArrayRef<int64_t> values) { return llvm::json::Array(values); };
        step["kind"] = "slice";
        step["offsets"] = array(slice.getStaticOffsets());
        step["sizes"] = array(slice.getStaticSizes());
        step["strides"] = array(slice.getStaticStrides());
      }
      steps.push_back(std::move(step));
    } else if (auto returnOp = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : returnOp.getOperands())
        outputs.push_back(numbers.lookup(v));
    } else {
      return op.emitOpError("kforge-partition: cannot describe this top-level op in plan.json");
    }
  }
  llvm::json::Object plan{{"format", "kforge-partition/1"}, {"entry", entry.getSymName()},
                          {"arguments", std::move(arguments)}, {"values", std::move(values)},
                          {"dispatches", std::move(dispatchesJson)}, {"steps", std::move(steps)},
                          {"outputs", std::move(outputs)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))) << "\n";
  SmallString<256> path(directory);
  llvm::sys::path::append(path, "plan.json");
  return writeFile(module, path, text);
}

struct KforgePartition : kforge::impl::KforgePartitionBase<KforgePartition> {
  using KforgePartitionBase::KforgePartitionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp entry;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || (entryName.empty() ? !func.isPublic() : func.getSymName() != entryName))
        continue;
      if (entry) {
        module.emitError("kforge-partition: several public functions; name one with entry=");
        return signalPassFailure();
      }
      entry = func;
    }
    if (!entry) {
      module.emitError("kforge-partition: no ") << (entryName.empty() ? "public function" : "function @" + entryName);
      return signalPassFailure();
    }
    if (!entry.getBody().hasOneBlock()) {
      entry.emitError("kforge-partition: the function has control flow (several blocks)");
      return signalPassFailure();
    }
    Partitioner partitioner(entry);
    SmallVector<func::FuncOp> dispatches;
    if (failed(partitioner.formGroups()))
      return signalPassFailure();
    partitioner.separateResults();
    if (failed(partitioner.outline(dispatches)))
      return signalPassFailure();

    for (func::FuncOp dispatch : dispatches) {
      collapseBatchRows(dispatch);
      sinkBoundaryReshapes(dispatch, entry);
    }

    // Name each dispatch by its content; identical ones become one function.
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> byName;
    for (func::FuncOp dispatch : dispatches) {
      std::string name = kforge::dispatchContentName(dispatch);
      if (func::FuncOp same = byName.lookup(name)) {
        if (failed(SymbolTable::replaceAllSymbolUses(dispatch, same.getSymNameAttr(), entry)))
          return signalPassFailure();
        dispatch.erase();
        continue;
      }
      if (failed(symbols.rename(dispatch, name)))
        return signalPassFailure();
      byName[dispatch.getSymName()] = dispatch;
    }
    if (!splitDirectory.empty() && failed(writeSplit(module, entry, splitDirectory)))
      return signalPassFailure();
  }
};

} // namespace
