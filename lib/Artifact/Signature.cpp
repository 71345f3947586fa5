//===- Signature.cpp - the artifact's calling convention -------------------===//

#include "kforge/Artifact/Artifact.h"

#include "kforge/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"

#include <functional>

using namespace mlir;

FailureOr<std::string> kforge::findEntry(ModuleOp payload, StringRef requested) {
  if (!requested.empty()) {
    auto func = payload.lookupSymbol<func::FuncOp>(requested);
    if (!func || func.isExternal())
      return payload.emitError() << "no function '" << requested << "' with a body in the payload";
    return requested.str();
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : payload.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func);
  if (candidates.size() != 1)
    return payload.emitError() << "expected exactly one public function with a body, found " << candidates.size()
                               << ": name the entry explicitly";
  return candidates.front().getSymName().str();
}

/// The function argument `value` is a view of, if any.
static BlockArgument getRootArgument(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      value = view.getViewSource();
      continue;
    }
    if (def->getNumOperands() == 1 && isa<BaseMemRefType>(def->getOperand(0).getType()) && isa<CastOpInterface>(def)) {
      value = def->getOperand(0);
      continue;
    }
    return nullptr;
  }
  return dyn_cast<BlockArgument>(value);
}

/// Marks in `written` every argument of `func` that some operation writes to (conservatively: operands of
/// operations whose effects are unknown count as written). A call of a function of the module with a body
/// (a whole model: the entry calls its dispatches) writes what the callee writes; `depth` bounds recursion.
static void findWrittenArguments(func::FuncOp func, llvm::SmallDenseSet<unsigned> &written, int depth = 0) {
  Block &entry = func.getBody().front();
  auto mark = [&](Value value) {
    if (BlockArgument arg = getRootArgument(value); arg && arg.getOwner() == &entry)
      written.insert(arg.getArgNumber());
  };
  func.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
      if (callee && !callee.isExternal() && depth < 8) {
        llvm::SmallDenseSet<unsigned> calleeWritten;
        findWrittenArguments(callee, calleeWritten, depth + 1);
        for (unsigned index : calleeWritten)
          if (index < call.getNumOperands())
            mark(call.getOperand(index));
        return;
      }
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        for (Value operand : op->getOperands())
          if (isa<BaseMemRefType>(operand.getType()))
            mark(operand);
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &instance : instances)
      if (isa<MemoryEffects::Write>(instance.getEffect()) && instance.getValue())
        mark(instance.getValue());
  });
}

/// Arguments of `func` (bufferized) whose first access, in the order of the function's top-level ops, reads
/// them: a payload that accumulates into an argument in place (`linalg.matmul ins(A, B) outs(C)` returning the
/// result: C + A x B into C's buffer). An op that reads and writes an argument (the matmul, reading its init)
/// reads it first. Ops whose accesses are unknown (a call) end the search for the arguments they touch.
static llvm::SmallDenseSet<unsigned> argumentsReadFirst(func::FuncOp func) {
  Block &entry = func.getBody().front();
  llvm::SmallDenseSet<unsigned> decided, readFirst;
  auto root = [&](Value value) -> std::optional<unsigned> {
    if (!isa<BaseMemRefType>(value.getType()))
      return std::nullopt;
    BlockArgument arg = getRootArgument(value);
    if (!arg || arg.getOwner() != &entry)
      return std::nullopt;
    return arg.getArgNumber();
  };
  auto touch = [&](std::optional<unsigned> index, bool read) {
    if (index && decided.insert(*index).second && read)
      readFirst.insert(*index);
  };
  for (Operation &op : entry) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op); linalgOp && linalgOp.hasPureBufferSemantics()) {
      // Reads first: every operand read (an input, or an init its body uses); then the inits it only writes.
      for (OpOperand *input : linalgOp.getDpsInputOperands())
        touch(root(input->get()), true);
      for (OpOperand &init : linalgOp.getDpsInitsMutable())
        if (linalgOp.payloadUsesValueFromOperand(&init))
          touch(root(init.get()), true);
      for (OpOperand &init : linalgOp.getDpsInitsMutable())
        touch(root(init.get()), false);
      continue;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(&op)) {
      touch(root(copy.getSource()), true);
      touch(root(copy.getTarget()), false);
      continue;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(&op);
    if (!effects) {
      for (Value operand : op.getOperands())
        if (std::optional<unsigned> index = root(operand))
          decided.insert(*index);
      continue;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &instance : instances)
      if (instance.getValue() && isa<MemoryEffects::Read>(instance.getEffect()))
        touch(root(instance.getValue()), true);
    for (const MemoryEffects::EffectInstance &instance : instances)
      if (instance.getValue() && isa<MemoryEffects::Write>(instance.getEffect()))
        touch(root(instance.getValue()), false);
  }
  return readFirst;
}

/// Whether `value` (a scalar in a linalg body) only moves toward a positive-domain op through steps that keep
/// a positive value positive: adding or multiplying a non-negative constant, dividing by one, float casts.
static bool isNonNegativeConstant(Value value) {
  while (auto cast = value.getDefiningOp<CastOpInterface>())
    value = cast->getOperand(0);
  FloatAttr attr;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    attr = dyn_cast<FloatAttr>(constant.getValue());
  return attr && !attr.getValue().isNegative() && !attr.getValue().isNaN();
}

static bool reachesPositiveDomainOp(Value value, int depth = 0) {
  if (depth > 8)
    return false;
  for (Operation *user : value.getUsers()) {
    if (isa<math::SqrtOp, math::RsqrtOp, math::LogOp, math::Log2Op, math::Log10Op>(user))
      return true;
    // (A sum of squares divided by the count is a variance: torch-mlir's group norm.)
    bool keepsSign = isa<arith::ExtFOp, arith::TruncFOp>(user) ||
                     (isa<arith::AddFOp, arith::MulFOp>(user) && llvm::any_of(user->getOperands(), [&](Value other) {
                        return other != value && isNonNegativeConstant(other);
                      })) ||
                     (isa<arith::DivFOp>(user) && user->getOperand(0) == value &&
                      isNonNegativeConstant(user->getOperand(1)));
    if (keepsSign && reachesPositiveDomainOp(user->getResult(0), depth + 1))
      return true;
  }
  return false;
}

/// The entry's arguments that the computation takes the square root or logarithm of (a batch norm's running
/// variance, through `+ eps`): kforge-run draws positive values for them, since random normal ones would make
/// the reference itself produce NaN. Followed through reshapes into linalg ops' bodies, as operands or as
/// elements read there with tensor.extract.
static llvm::SmallDenseSet<unsigned> positiveDomainArguments(func::FuncOp func) {
  llvm::SmallDenseSet<unsigned> positive;
  std::function<bool(Value)> reads = [&](Value tensor) {
    for (OpOperand &use : tensor.getUses()) {
      Operation *user = use.getOwner();
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user) && reads(user->getResult(0)))
        return true;
      // An element read inside a body (a gather, or a statistic read at the loop's own place).
      if (auto extract = dyn_cast<tensor::ExtractOp>(user);
          extract && use.getOperandNumber() == 0 && reachesPositiveDomainOp(extract.getResult()))
        return true;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (linalgOp && linalgOp.isDpsInput(&use) && !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(user) &&
          reachesPositiveDomainOp(linalgOp.getMatchingBlockArgument(&use)))
        return true;
    }
    return false;
  };
  for (BlockArgument argument : func.getArguments())
    if (reads(argument))
      positive.insert(argument.getArgNumber());
  return positive;
}

/// Integer arguments used as indices (a cross entropy's class indices): for each, the bound N of the values
/// the computation can take, the size of the dimension a `tensor.extract` reads at it, or the constant of a
/// `value < C` check (torch-mlir's bounds assertions). Followed through reshapes into linalg bodies, integer
/// casts, selects, and out of a body through its yield to the op's result and on to its readers. kforge-run
/// draws uniform integers in [0, N) for them; an integer input with no such bound has no domain.
static llvm::SmallDenseMap<unsigned, int64_t> indexDomainArguments(func::FuncOp func) {
  llvm::SmallDenseMap<unsigned, int64_t> bounds;
  for (BlockArgument argument : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type || !type.getElementType().isSignlessInteger() || type.getElementType().getIntOrFloatBitWidth() < 8)
      continue;
    int64_t bound = INT64_MAX;
    SmallVector<Value> work{argument};
    llvm::SmallDenseSet<Value> seen;
    while (!work.empty() && seen.size() < 256) {
      Value value = work.pop_back_val();
      if (!seen.insert(value).second)
        continue;
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, arith::IndexCastOp, arith::IndexCastUIOp,
                arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(user)) {
          work.push_back(user->getResult(0));
        } else if (auto select = dyn_cast<arith::SelectOp>(user)) {
          if (use.getOperandNumber() != 0)
            work.push_back(select.getResult());
        } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
          if (linalgOp.isDpsInput(&use))
            work.push_back(linalgOp.getMatchingBlockArgument(&use));
        } else if (auto yield = dyn_cast<linalg::YieldOp>(user)) {
          if (auto owner = dyn_cast<linalg::LinalgOp>(yield->getParentOp()))
            work.push_back(owner->getResult(use.getOperandNumber()));
        } else if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
          if (use.getOperandNumber() > 0) {
            int64_t size = extract.getTensor().getType().getDimSize(use.getOperandNumber() - 1);
            if (!ShapedType::isDynamic(size))
              bound = std::min(bound, size);
          }
        } else if (auto compare = dyn_cast<arith::CmpIOp>(user)) {
          APInt limit;
          bool less = compare.getPredicate() == arith::CmpIPredicate::slt ||
                      compare.getPredicate() == arith::CmpIPredicate::ult;
          if (less && use.getOperandNumber() == 0 && matchPattern(compare.getRhs(), m_ConstantInt(&limit)) &&
              limit.getSExtValue() > 0)
            bound = std::min(bound, limit.getSExtValue());
        }
      }
    }
    if (bound <= (int64_t(1) << 24)) // kforge-run's inputs travel as floats: indices exact up to 2^24
      bounds[argument.getArgNumber()] = bound;
  }
  return bounds;
}

FailureOr<std::vector<kforge::ArgumentInfo>> kforge::describeEntryArguments(ModuleOp payload, StringRef entry) {
  llvm::SmallDenseSet<unsigned> positive;
  llvm::SmallDenseMap<unsigned, int64_t> indexBounds;
  if (auto original = payload.lookupSymbol<func::FuncOp>(entry); original && !original.isExternal()) {
    positive = positiveDomainArguments(original);
    indexBounds = indexDomainArguments(original);
  }
  // The calling convention is the one the lowering pipelines produce: bufferize a copy the same way.
  OwningOpRef<ModuleOp> copy = payload.clone();
  PassManager pm(payload.getContext());
  buildBufferizeToDestinationPassingPipeline(pm, /*cInterface=*/false);
  if (failed(pm.run(*copy)))
    return payload.emitError() << "cannot bufferize the payload to describe its arguments";

  auto func = copy->lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return payload.emitError() << "entry function '" << entry << "' not found";
  if (func.getNumResults() != 0)
    return func.emitError() << "entry function still returns values after bufferization (results must be "
                               "statically shaped tensors)";

  llvm::SmallDenseSet<unsigned> written;
  findWrittenArguments(func, written);
  // An output's elements start as a poison the runner can see left unwritten; a payload that reads an argument
  // it then writes (accumulates into it in place) would read the poison, and its reference too: said here,
  // not as a reference with non-finite values.
  llvm::SmallDenseSet<unsigned> readFirst = argumentsReadFirst(func);
  for (unsigned index = 0; index < func.getNumArguments(); ++index)
    if (written.contains(index) && readFirst.contains(index))
      return func.emitError() << "argument #" << index
                              << " is read and then written in place: the payload accumulates into its argument "
                                 "(e.g. linalg.matmul ins(A, B) outs(C) returning C + A x B), and kforge's artifacts "
                                 "take outputs that start unwritten; make the accumulation out of place (a filled "
                                 "tensor.empty as the init, then add C to the result)";
  std::vector<ArgumentInfo> arguments;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity())
      return func.emitError() << "argument #" << index << " has type " << type
                              << "; artifacts take statically shaped, contiguous tensors";
    // Nothing to compute and nothing a runner could compare: a clear error, never a vacuous "correct".
    if (memref.getNumElements() == 0)
      return func.emitError() << "argument #" << index << " has type " << type
                              << ", which holds no elements; artifacts take non-empty tensors";
    std::string dtype;
    llvm::raw_string_ostream os(dtype);
    memref.getElementType().print(os);
    bool output = written.contains(index);
    std::string domain;
    if (!output && positive.contains(index))
      domain = "positive";
    if (auto bound = indexBounds.find(index); !output && bound != indexBounds.end())
      domain = "index:" + std::to_string(bound->second);
    arguments.push_back({output ? "output" : "input", dtype,
                         std::vector<int64_t>(memref.getShape().begin(), memref.getShape().end()), domain});
  }
  return arguments;
}

int64_t kforge::countFlops(ModuleOp payload, StringRef entry) {
  auto func = payload.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return 0;
  int64_t flops = 0;
  bool dynamic = false;
  func.walk([&](linalg::LinalgOp op) {
    int64_t points = 1;
    for (int64_t range : op.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(range)) {
        dynamic = true;
        return;
      }
      points *= range;
    }
    int64_t perPoint = 0;
    for (Operation &inner : op->getRegion(0).front().without_terminator()) {
      if (isa<math::FmaOp>(inner))
        perPoint += 2;
      else if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp, arith::MaximumFOp, arith::MinimumFOp,
                   arith::MaxNumFOp, arith::MinNumFOp, arith::NegFOp>(inner) ||
               isa<math::MathDialect>(inner.getDialect()))
        perPoint += 1;
    }
    flops += points * perPoint;
  });
  return dynamic ? 0 : flops;
}
