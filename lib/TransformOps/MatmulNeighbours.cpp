//===- MatmulNeighbours.cpp - a bufferized matmul's fill and epilogue -----===//

#include "MatmulNeighbours.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

std::optional<int64_t> kforge::innermostStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() || ShapedType::isDynamic(strides.back()))
    return std::nullopt;
  return strides.back();
}

kforge::MatmulNeighbours kforge::findMatmulNeighbours(linalg::MatmulOp matmul) {
  MatmulNeighbours found;
  Value c = matmul.getDpsInits()[0];
  auto fill = dyn_cast_or_null<linalg::FillOp>(matmul->getPrevNode());
  if (fill && fill.hasPureBufferSemantics() && fill.getDpsInits().size() == 1 && fill.getDpsInits()[0] == c)
    found.fill = fill;

  // The next op with effects (views of the output, index arithmetic may come between).
  Operation *next = matmul->getNextNode();
  while (next && isMemoryEffectFree(next) && next->getNumRegions() == 0)
    next = next->getNextNode();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  auto alloc = c.getDefiningOp<memref::AllocOp>();
  if (!generic || !alloc || !generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 2 || generic.getNumParallelLoops() != 2)
    return found;
  if (!generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity() ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return found;
  bool readsC = false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return found;
    if (input->get() == c) {
      if (!map.isIdentity())
        return found;
      readsC = true;
    } else if (!isa<MemRefType>(input->get().getType()) && !input->get().getType().isIntOrIndexOrFloat()) {
      return found;
    }
  }
  if (!readsC || generic.getDpsInits()[0] == c || !generic.getBody()->getOps<linalg::IndexOp>().empty())
    return found;
  for (Operation *user : alloc->getUsers())
    if (user != matmul && user != generic && (!found.fill || user != found.fill.getOperation()))
      return found;
  found.epilogue = generic;
  found.cBuffer = alloc;
  return found;
}

bool kforge::cUsedAfter(linalg::MatmulOp matmul, Operation *epilogue) {
  for (Operation *user : matmul.getDpsInits()[0].getUsers())
    if (user != matmul.getOperation() && user != epilogue && user->getBlock() == matmul->getBlock() &&
        matmul->isBeforeInBlock(user) && !isa<memref::DeallocOp>(user))
      return true;
  return false;
}

Value kforge::epilogueElement(OpBuilder &b, Location loc, linalg::GenericOp epilogue, Value c, Value value, Value row,
                              Value col) {
  Block &body = epilogue.getRegion().front();
  IRMapping map;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(input->getOperandNumber());
    if (input->get() == c) {
      map.map(arg, value);
      continue;
    }
    if (!isa<MemRefType>(input->get().getType())) {
      map.map(arg, input->get()); // a scalar input
      continue;
    }
    SmallVector<Value> indices;
    for (AffineExpr result : epilogue.getMatchingIndexingMap(input).getResults())
      indices.push_back(cast<AffineDimExpr>(result).getPosition() == 0 ? row : col);
    map.map(arg, memref::LoadOp::create(b, loc, input->get(), indices));
  }
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  return map.lookupOrDefault(body.getTerminator()->getOperand(0));
}
