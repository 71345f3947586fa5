//===- Nodes.cpp - the interpreter's tensors, evaluated element by element ===//

#include "Nodes.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace kforge::interpret;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// The float64 value of one element of type `type` stored at `p` (little-endian, as MLIR keeps it).
static double readElement(Type type, const char *p) {
  if (type.isF32()) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (type.isF64()) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (auto floatType = dyn_cast<FloatType>(type)) {
    unsigned width = floatType.getWidth();
    uint64_t bits = 0;
    std::memcpy(&bits, p, (width + 7) / 8);
    APFloat value(floatType.getFloatSemantics(), APInt(width, bits));
    bool losesInfo = false;
    value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
    return value.convertToDouble();
  }
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  if (width == 1)
    return *p != 0;
  int64_t v = 0;
  switch (width) {
  case 8:
    v = *reinterpret_cast<const int8_t *>(p);
    break;
  case 16: {
    int16_t x;
    std::memcpy(&x, p, 2);
    v = x;
    break;
  }
  case 32: {
    int32_t x;
    std::memcpy(&x, p, 4);
    v = x;
    break;
  }
  default:
    std::memcpy(&v, p, 8);
    break;
  }
  return double(v);
}

static std::optional<double> attributeValue(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getType().isInteger(1) ? double(i.getValue().getBoolValue()) : double(i.getValue().getSExtValue());
  return std::nullopt;
}

bool ConstantNode::init(ElementsAttr attr, std::string &why) {
  elementType = attr.getElementType();
  if (!elementType.isIntOrIndexOrFloat()) {
    why = "its elements are not numbers";
    return false;
  }
  unsigned width = elementType.isIndex() ? 64 : elementType.getIntOrFloatBitWidth();
  bytes = width == 1 ? 1 : (width + 7) / 8;
  int64_t count = attr.getNumElements();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob) {
      why = "its resource blob is not in the file (elided)";
      return false;
    }
    ArrayRef<char> data = blob->getData();
    if (int64_t(data.size()) != count * int64_t(bytes)) {
      why = "its resource blob holds " + std::to_string(data.size()) + " bytes, not " + std::to_string(count * bytes);
      return false;
    }
    raw = data.data();
    return true;
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense) {
    why = "it is neither dense elements nor a resource blob";
    return false;
  }
  if (dense.isSplat()) {
    std::optional<double> value = attributeValue(dense.getSplatValue<Attribute>());
    splat = value.has_value();
    splatValue = value.value_or(0);
    if (!splat)
      why = "its splat value is not a number";
    return splat;
  }
  bool rawReadable = width == 8 || width == 16 || width == 32 || width == 64;
  if (rawReadable && (elementType.isF32() || elementType.isF64() || isa<IntegerType, IndexType>(elementType))) {
    raw = dense.getRawData().data();
    return true;
  }
  values.reserve(count);
  for (Attribute element : dense.getValues<Attribute>())
    values.push_back(attributeValue(element).value_or(NAN));
  return true;
}

double ConstantNode::readRaw(int64_t flat) const { return readElement(elementType, raw + flat * bytes); }

double ConstantNode::at(const int64_t *index) {
  if (splat)
    return splatValue;
  int64_t flat = linearize(index);
  return values.empty() ? readRaw(flat) : values[flat];
}

double EmptyNode::at(const int64_t *) {
  interp.fail("an element of a tensor.empty (uninitialised) is read");
  return NAN;
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

double ExtractSliceNode::at(const int64_t *index) {
  size_t k = 0;
  for (size_t d = 0; d < sourceIndex.size(); ++d)
    sourceIndex[d] = offsets[d] + (dropped.test(d) ? 0 : index[k++] * strides[d]);
  return source->at(sourceIndex.data());
}

double InsertSliceNode::at(const int64_t *index) {
  size_t k = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t relative = index[d] - offsets[d];
    if (relative < 0 || relative % strides[d] != 0 || relative / strides[d] >= sizes[d])
      return dest->at(index);
    if (!dropped.test(d))
      sourceIndex[k++] = relative / strides[d];
  }
  return source->at(sourceIndex.data());
}

double PadNode::at(const int64_t *index) {
  for (size_t d = 0; d < shape.size(); ++d) {
    sourceIndex[d] = index[d] - low[d];
    if (sourceIndex[d] < 0 || sourceIndex[d] >= source->shape[d])
      return padding;
  }
  return source->at(sourceIndex.data());
}

double ConcatNode::at(const int64_t *index) {
  std::copy(index, index + shape.size(), inputIndex.begin());
  for (Node *input : inputs) {
    if (inputIndex[dim] < input->shape[dim])
      return input->at(inputIndex.data());
    inputIndex[dim] -= input->shape[dim];
  }
  interp.fail("a tensor.concat is read past its end");
  return NAN;
}

//===----------------------------------------------------------------------===//
// Indexing maps and bodies
//===----------------------------------------------------------------------===//

static int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

static int64_t evaluateExpr(AffineExpr expr, const int64_t *loop) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return loop[dim.getPosition()];
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return constant.getValue();
  auto binary = cast<AffineBinaryOpExpr>(expr);
  int64_t lhs = evaluateExpr(binary.getLHS(), loop), rhs = evaluateExpr(binary.getRHS(), loop);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return lhs + rhs;
  case AffineExprKind::Mul:
    return lhs * rhs;
  case AffineExprKind::FloorDiv:
    return rhs == 0 ? 0 : floorDiv(lhs, rhs);
  case AffineExprKind::CeilDiv:
    return rhs == 0 ? 0 : -floorDiv(-lhs, rhs);
  case AffineExprKind::Mod:
    return rhs == 0 ? 0 : lhs - floorDiv(lhs, rhs) * rhs;
  default:
    return 0;
  }
}

CompiledMap::CompiledMap(AffineMap map) : map(map) {
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      dims.push_back(dim.getPosition());
      constants.push_back(0);
    } else if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      dims.push_back(-1);
      constants.push_back(constant.getValue());
    } else {
      dims.push_back(-2);
      constants.push_back(0);
    }
  }
}

void CompiledMap::apply(const int64_t *loop, int64_t *out) const {
  for (size_t r = 0; r < dims.size(); ++r)
    out[r] = dims[r] >= 0 ? loop[dims[r]] : dims[r] == -1 ? constants[r] : evaluateExpr(map.getResult(r), loop);
}

void kforge::interpret::execute(Program &program, const int64_t *loop, PayloadInterpreter &interp) {
  double *slots = program.frame.data();
  for (const Instr &in : program.code) {
    switch (in.kind) {
    case Kind::Index:
      slots[in.result] = double(loop[int(in.constant)]);
      break;
    case Kind::Extract: {
      llvm::SmallVector<int64_t, 6> index;
      for (int slot : in.indices)
        index.push_back(int64_t(slots[slot]));
      // An element read outside its tensor (a gather at an index the payload then discards) reads as NaN.
      slots[in.result] = in.tensor->contains(index.data()) ? in.tensor->at(index.data()) : NAN;
      break;
    }
    default:
      slots[in.result] = applyScalar(in, slots);
    }
  }
}

//===----------------------------------------------------------------------===//
// linalg.generic
//===----------------------------------------------------------------------===//

/// Entries kept per generic before its memo starts over (bounds the interpreter's memory).
static constexpr size_t kMemoLimit = size_t(1) << 21;

void GenericEval::run(const int64_t *position) {
  loop.assign(ranges.size(), 0);
  acc.assign(inits.size(), 0);
  for (size_t k = 0; k < outputDims.size(); ++k)
    if (outputDims[k] >= 0)
      loop[outputDims[k]] = position[k];
  for (size_t r = 0; r < inits.size(); ++r)
    if (inits[r])
      acc[r] = inits[r]->at(position);
  double *slots = program.frame.data();
  while (true) {
    if (!interp.tick())
      return;
    for (Input &input : inputs) {
      input.map.apply(loop.data(), input.index.data());
      if (!input.node->contains(input.index.data())) {
        interp.fail("an indexing map reads outside its operand");
        return;
      }
      slots[input.slot] = input.node->at(input.index.data());
    }
    for (size_t r = 0; r < inits.size(); ++r)
      slots[initSlots[r]] = acc[r];
    execute(program, loop.data(), interp);
    for (size_t r = 0; r < acc.size(); ++r)
      acc[r] = slots[program.yields[r]];
    // The next point of the free dimensions, the innermost fastest.
    size_t k = freeDims.size();
    while (k > 0) {
      int dim = freeDims[k - 1];
      if (++loop[dim] < ranges[dim])
        break;
      loop[dim] = 0;
      --k;
    }
    if (k == 0)
      return;
  }
}

double GenericEval::value(unsigned result, const int64_t *position) {
  // A position a constant output dimension does not reach is not written: the init's element stays.
  for (size_t k = 0; k < outputDims.size(); ++k)
    if (outputDims[k] < 0 && position[k] != outputConstants[k])
      return inits[result] ? inits[result]->at(position) : NAN;
  if (freeDims.empty()) {
    run(position);
    return acc[result];
  }
  int64_t key = 0;
  for (size_t d = 0; d < outputShape.size(); ++d)
    key = key * outputShape[d] + position[d];
  if (auto it = memo.find(key); it != memo.end())
    return it->second[result];
  run(position);
  if (interp.failed())
    return NAN;
  if (memo.size() >= kMemoLimit)
    memo.clear();
  memo.emplace(key, acc);
  return acc[result];
}
