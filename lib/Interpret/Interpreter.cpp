//===- Interpreter.cpp - a payload's output elements in float64 on the host ===//
//
// Builds the interpreter's nodes from the entry function, op by op, refusing (with the op and its location)
// anything it has no meaning for, so that evaluation itself cannot meet an unknown op.
//
//===----------------------------------------------------------------------===//

#include "kforge/Interpret/Interpreter.h"

#include "Nodes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace kforge;
using namespace kforge::interpret;

namespace kforge {

/// Tensor values an interpreted function may have (a KernelBench module has tens; a partitioned model's kernel
/// fewer): at 1 KB of stack a level, well inside a thread's 8 MB.
static constexpr size_t kMaxNodes = 4096;

class InterpreterBuilder {
public:
  InterpreterBuilder(PayloadInterpreter &interp, std::string &error) : interp(interp), error(error) {}
  bool build(func::FuncOp func, ArgumentSource &arguments);

private:
  bool refuse(Operation *op, const std::string &why);
  template <typename T, typename... Args> T *add(Args &&...args) {
    auto node = std::make_unique<T>(interp, std::forward<Args>(args)...);
    T *raw = node.get();
    interp.nodes.push_back(std::move(node));
    return raw;
  }
  bool buildOp(Operation *op);
  bool buildGeneric(linalg::GenericOp op);
  bool buildBody(linalg::GenericOp op, Program &program);
  bool buildScalar(Operation *op);
  Node *tensorOf(Operation *user, Value value);

  PayloadInterpreter &interp;
  std::string &error;
  llvm::DenseMap<Value, Node *> tensors;
  llvm::DenseMap<Value, double> scalars;
};

} // namespace kforge

bool InterpreterBuilder::refuse(Operation *op, const std::string &why) {
  std::string location;
  llvm::raw_string_ostream os(location);
  if (auto file = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":" << file.getColumn();
  else
    op->getLoc().print(os);
  error = "cannot evaluate '" + op->getName().getStringRef().str() + "' at " + location + ": " + why;
  return false;
}

Node *InterpreterBuilder::tensorOf(Operation *user, Value value) {
  Node *node = tensors.lookup(value);
  if (!node)
    refuse(user, "an operand is not a statically shaped tensor the interpreter knows");
  return node;
}

static bool staticShape(Type type, SmallVectorImpl<int64_t> &shape) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape())
    return false;
  shape.assign(ranked.getShape().begin(), ranked.getShape().end());
  return true;
}

bool InterpreterBuilder::build(func::FuncOp func, ArgumentSource &arguments) {
  if (func.isExternal())
    return refuse(func, "the function has no body");
  if (!func.getBody().hasOneBlock())
    return refuse(func, "the function's body has more than one block");
  for (BlockArgument argument : func.getArguments()) {
    SmallVector<int64_t> shape;
    if (!staticShape(argument.getType(), shape))
      return refuse(func,
                    "argument #" + std::to_string(argument.getArgNumber()) + " is not a statically shaped tensor");
    tensors[argument] = add<ArgumentNode>(shape, arguments, argument.getArgNumber());
  }
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value result : ret.getOperands()) {
        Node *node = tensorOf(&op, result);
        if (!node)
          return false;
        interp.results.push_back(node);
      }
      return true;
    }
    if (!buildOp(&op))
      return false;
    // An element is evaluated by recursion through the ops it depends on: a bound on their number bounds the
    // depth (a few hundred bytes of stack a level), where a model's worth of chained ops could overflow it.
    if (interp.nodes.size() > kMaxNodes)
      return refuse(&op, "the function has more than " + std::to_string(kMaxNodes) +
                             " tensor values, more than the interpreter evaluates by recursion");
  }
  return refuse(func, "the function does not end in func.return");
}

bool InterpreterBuilder::buildOp(Operation *op) {
  // An importer's runtime assertion (torch-mlir's index bounds) computes nothing the outputs depend on.
  if (isa<cf::AssertOp>(op))
    return true;
  if (op->getNumResults() == 1 && op->getResult(0).getType().isIntOrIndexOrFloat())
    return buildScalar(op);
  SmallVector<int64_t> shape;
  if (op->getNumResults() == 0 || !staticShape(op->getResult(0).getType(), shape))
    return refuse(op, "the interpreter evaluates ops whose results are scalars or statically shaped tensors");
  Value result = op->getResult(0);
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto elements = dyn_cast<ElementsAttr>(constant.getValue());
    auto *node = add<ConstantNode>(shape);
    std::string why = "not an elements attribute";
    if (!elements || !node->init(elements, why))
      return refuse(op, why);
    tensors[result] = node;
    return true;
  }
  if (isa<tensor::EmptyOp>(op)) {
    tensors[result] = add<EmptyNode>(shape);
    return true;
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return buildGeneric(generic);
  if (isa<linalg::LinalgOp>(op))
    return refuse(op, "a named linalg op (prepareForInterpretation generalizes them first)");
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(op)) {
    Node *source = tensorOf(op, op->getOperand(0));
    if (!source)
      return false;
    tensors[result] = add<ReshapeNode>(shape, source);
    return true;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    Node *source = tensorOf(op, slice.getSource());
    if (!source)
      return false;
    if (ShapedType::isDynamicShape(slice.getStaticOffsets()) || ShapedType::isDynamicShape(slice.getStaticStrides()))
      return refuse(op, "its offsets or strides are dynamic");
    tensors[result] = add<ExtractSliceNode>(shape, source, slice.getStaticOffsets(), slice.getStaticStrides(),
                                            slice.getDroppedDims());
    return true;
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    Node *source = tensorOf(op, insert.getSource()), *dest = tensorOf(op, insert.getDest());
    if (!source || !dest)
      return false;
    if (ShapedType::isDynamicShape(insert.getStaticOffsets()) || ShapedType::isDynamicShape(insert.getStaticSizes()) ||
        ShapedType::isDynamicShape(insert.getStaticStrides()))
      return refuse(op, "its offsets, sizes or strides are dynamic");
    tensors[result] = add<InsertSliceNode>(shape, source, dest, insert.getStaticOffsets(), insert.getStaticSizes(),
                                           insert.getStaticStrides(), insert.getDroppedDims());
    return true;
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    Node *source = tensorOf(op, pad.getSource());
    if (!source)
      return false;
    Value padding = pad.getConstantPaddingValue();
    if (ShapedType::isDynamicShape(pad.getStaticLow()) || !padding || !scalars.count(padding))
      return refuse(op, "its padding is not static, or not one value known before it");
    tensors[result] = add<PadNode>(shape, source, pad.getStaticLow(), scalars.lookup(padding));
    return true;
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    std::vector<Node *> inputs;
    for (Value input : concat.getInputs()) {
      inputs.push_back(tensorOf(op, input));
      if (!inputs.back())
        return false;
    }
    tensors[result] = add<ConcatNode>(shape, std::move(inputs), int64_t(concat.getDim()));
    return true;
  }
  return refuse(op, "the interpreter has no meaning for it");
}

/// A scalar outside any body (a constant, the padding value, arithmetic on them, an element read with
/// tensor.extract): evaluated once, now.
bool InterpreterBuilder::buildScalar(Operation *op) {
  Value result = op->getResult(0);
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    Node *source = tensorOf(op, extract.getTensor());
    if (!source)
      return false;
    SmallVector<int64_t> index;
    for (Value i : extract.getIndices()) {
      if (!scalars.count(i))
        return refuse(op, "an index is not known");
      index.push_back(int64_t(scalars.lookup(i)));
    }
    if (!source->contains(index.data()))
      return refuse(op, "it reads outside its tensor");
    double value = source->at(index.data());
    if (interp.failed()) {
      error = interp.failure;
      return false;
    }
    scalars[result] = value;
    return true;
  }
  Instr instr;
  std::string why;
  if (!decodeScalarOp(op, instr, why))
    return refuse(op, why);
  std::vector<double> frame;
  for (auto [k, operand] : llvm::enumerate(op->getOperands())) {
    if (!scalars.count(operand) || k >= 3)
      return refuse(op, "an operand is not a scalar known before it");
    instr.operands[k] = int(k);
    frame.push_back(scalars.lookup(operand));
  }
  scalars[result] = instr.kind == Kind::Constant ? instr.constant : applyScalar(instr, frame.data());
  return true;
}

bool InterpreterBuilder::buildBody(linalg::GenericOp op, Program &program) {
  Block &body = op.getRegion().front();
  llvm::DenseMap<Value, int> slots;
  auto slotOf = [&](Value value) -> int {
    if (auto it = slots.find(value); it != slots.end())
      return it->second;
    if (!scalars.count(value))
      return -1;
    // A scalar from outside the body: preset once.
    program.frame.push_back(scalars.lookup(value));
    return slots[value] = int(program.frame.size()) - 1;
  };
  for (BlockArgument argument : body.getArguments()) {
    slots[argument] = int(program.frame.size());
    program.frame.push_back(0);
  }
  for (Operation &inner : body) {
    if (auto yield = dyn_cast<linalg::YieldOp>(inner)) {
      for (Value value : yield.getOperands()) {
        int slot = slotOf(value);
        if (slot < 0)
          return refuse(&inner, "it yields a value the interpreter does not know");
        program.yields.push_back(slot);
      }
      return true;
    }
    if (isa<cf::AssertOp>(inner))
      continue; // a bounds assertion (torch-mlir's gathers): nothing the outputs depend on
    if (inner.getNumRegions() != 0 || inner.getNumResults() != 1)
      return refuse(&inner, "ops with regions or several results are not evaluated inside a linalg body");
    Instr instr;
    std::string why;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      instr.kind = Kind::Index;
      instr.constant = double(index.getDim());
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
      instr.kind = Kind::Extract;
      instr.tensor = tensorOf(&inner, extract.getTensor());
      if (!instr.tensor)
        return false;
      for (Value i : extract.getIndices()) {
        instr.indices.push_back(slotOf(i));
        if (instr.indices.back() < 0)
          return refuse(&inner, "an index is not known");
      }
    } else if (!decodeScalarOp(&inner, instr, why)) {
      return refuse(&inner, why);
    }
    if (instr.kind == Kind::Constant) {
      program.frame.push_back(instr.constant);
      slots[inner.getResult(0)] = int(program.frame.size()) - 1;
      continue;
    }
    for (auto [k, operand] : llvm::enumerate(inner.getOperands())) {
      if (instr.kind == Kind::Extract)
        break;
      if (k >= 3)
        return refuse(&inner, "more than three operands");
      instr.operands[k] = slotOf(operand);
      if (instr.operands[k] < 0)
        return refuse(&inner, "an operand is not known");
    }
    program.frame.push_back(0);
    instr.result = slots[inner.getResult(0)] = int(program.frame.size()) - 1;
    program.code.push_back(std::move(instr));
  }
  return refuse(op, "its body does not end in linalg.yield");
}

bool InterpreterBuilder::buildGeneric(linalg::GenericOp op) {
  auto eval = std::make_unique<GenericEval>(interp);
  if (!buildBody(op, eval->program))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges))
    return refuse(op, "its loop sizes are not static");
  eval->ranges.assign(ranges.begin(), ranges.end());
  Block &body = op.getRegion().front();
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument argument = body.getArgument(input->getOperandNumber());
    if (!isa<ShapedType>(input->get().getType())) {
      if (!scalars.count(input->get()))
        return refuse(op, "a scalar input is not known");
      eval->program.frame[argument.getArgNumber()] = scalars.lookup(input->get());
      continue;
    }
    if (argument.use_empty())
      continue;
    Node *node = tensorOf(op, input->get());
    if (!node)
      return false;
    AffineMap map = op.getMatchingIndexingMap(input);
    eval->inputs.push_back(
        {node, CompiledMap(map), int(argument.getArgNumber()), SmallVector<int64_t>(map.getNumResults(), 0)});
  }
  AffineMap outputMap;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (outputMap && map != outputMap)
      return refuse(op, "its results are indexed by different maps");
    outputMap = map;
    BlockArgument argument = body.getArgument(init.getOperandNumber());
    Node *node = tensorOf(op, init.get());
    if (!node)
      return false;
    eval->inits.push_back(argument.use_empty() ? nullptr : node);
    eval->initSlots.push_back(int(argument.getArgNumber()));
  }
  if (!outputMap)
    return refuse(op, "it has no results");
  llvm::SmallBitVector fixed(ranges.size());
  for (AffineExpr expr : outputMap.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (fixed.test(dim.getPosition()))
        return refuse(op, "its output map repeats a loop dimension");
      fixed.set(dim.getPosition());
      eval->outputDims.push_back(int(dim.getPosition()));
      eval->outputConstants.push_back(0);
    } else if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      eval->outputDims.push_back(-1);
      eval->outputConstants.push_back(constant.getValue());
    } else {
      return refuse(op, "its output map is not a projection of the loop dimensions");
    }
  }
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (!fixed.test(d))
      eval->freeDims.push_back(int(d));
  SmallVector<int64_t> shape;
  staticShape(op->getResult(0).getType(), shape);
  eval->outputShape.assign(shape.begin(), shape.end());
  for (auto [r, result] : llvm::enumerate(op->getResults())) {
    SmallVector<int64_t> resultShape;
    staticShape(result.getType(), resultShape);
    tensors[result] = add<GenericResultNode>(resultShape, *eval, unsigned(r));
  }
  interp.generics.push_back(std::move(eval));
  return true;
}

//===----------------------------------------------------------------------===//
// PayloadInterpreter
//===----------------------------------------------------------------------===//

PayloadInterpreter::~PayloadInterpreter() = default;

std::unique_ptr<PayloadInterpreter> PayloadInterpreter::create(func::FuncOp func, ArgumentSource &arguments,
                                                               std::string &error) {
  std::unique_ptr<PayloadInterpreter> interp(new PayloadInterpreter());
  InterpreterBuilder builder(*interp, error);
  if (!builder.build(func, arguments))
    return nullptr;
  return interp;
}

bool PayloadInterpreter::tick() {
  if ((++counted & 4095) == 0 && std::chrono::steady_clock::now() > deadline)
    fail("the time limit passed");
  return failure.empty();
}

void PayloadInterpreter::fail(std::string why) {
  if (failure.empty())
    failure = std::move(why);
}

std::optional<double> PayloadInterpreter::evaluate(unsigned result, int64_t flat, std::string &error) {
  if (result >= results.size()) {
    error = "the function has no result #" + std::to_string(result);
    return std::nullopt;
  }
  interpret::Node *node = results[result];
  int64_t elements = 1;
  for (int64_t size : node->shape)
    elements *= size;
  if (flat < 0 || flat >= elements) {
    error = "element " + std::to_string(flat) + " is outside result #" + std::to_string(result);
    return std::nullopt;
  }
  SmallVector<int64_t> index(node->shape.size());
  node->delinearize(flat, index.data());
  double value = node->at(index.data());
  if (!failure.empty()) {
    error = failure;
    return std::nullopt;
  }
  return value;
}

LogicalResult kforge::prepareForInterpretation(ModuleOp module) {
  RewritePatternSet patterns(module.getContext());
  linalg::populateLinalgNamedOpsGeneralizationPatterns(patterns);
  return applyPatternsGreedily(module, std::move(patterns));
}
