//===- KforgeTransformOps.cpp - transform.kforge.* ops --------------------===//

#include "kforge/TransformOps/KforgeTransformOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"

using namespace mlir;

#define GET_OP_CLASSES
#include "kforge/TransformOps/KforgeTransformOps.cpp.inc"

//===----------------------------------------------------------------------===//
// OutsToEmptyOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure transform::OutsToEmptyOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                 Operation *target,
                                                                 transform::ApplyToEachResultList &results,
                                                                 transform::TransformState &state) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(target);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics())
    return emitSilenceableError() << "expected a linalg op on tensors";

  rewriter.setInsertionPoint(linalgOp);
  for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
    if (linalgOp.payloadUsesValueFromOperand(&init))
      continue;
    Value current = init.get();
    if (current.getDefiningOp<tensor::EmptyOp>())
      continue;
    auto type = cast<RankedTensorType>(current.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, linalgOp.getLoc(), current);
    Value empty =
        tensor::EmptyOp::create(rewriter, linalgOp.getLoc(), sizes, type.getElementType(), type.getEncoding());
    rewriter.modifyOpInPlace(linalgOp, [&] { init.set(empty); });
  }
  results.push_back(linalgOp);
  return DiagnosedSilenceableFailure::success();
}

void transform::OutsToEmptyOp::getEffects(SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getTargetMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// CopyToLinalgOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure transform::CopyToLinalgOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                  Operation *target,
                                                                  transform::ApplyToEachResultList &results,
                                                                  transform::TransformState &state) {
  auto copy = dyn_cast<memref::CopyOp>(target);
  if (!copy || !isa<MemRefType>(copy.getSource().getType()) || !isa<MemRefType>(copy.getTarget().getType()))
    return emitSilenceableError() << "expected a memref.copy between ranked memrefs";
  rewriter.setInsertionPoint(copy);
  auto linalgCopy = rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(), copy.getTarget());
  results.push_back(linalgCopy);
  return DiagnosedSilenceableFailure::success();
}

void transform::CopyToLinalgOp::getEffects(SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::consumesHandle(getTargetMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// SetKernelAttributesOp
//===----------------------------------------------------------------------===//

LogicalResult transform::SetKernelAttributesOp::verify() {
  if (!getMinBlocksPerSm() && !getMaxRegisters())
    return emitOpError() << "needs min_blocks_per_sm, max_registers or both";
  if (getMinBlocksPerSm() && *getMinBlocksPerSm() <= 0)
    return emitOpError() << "min_blocks_per_sm must be positive";
  if (getMaxRegisters() && (*getMaxRegisters() <= 0 || *getMaxRegisters() > 255))
    return emitOpError() << "max_registers must be in 1..255";
  return success();
}

DiagnosedSilenceableFailure transform::SetKernelAttributesOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                         Operation *target,
                                                                         transform::ApplyToEachResultList &results,
                                                                         transform::TransformState &state) {
  if (!isa<gpu::LaunchOp>(target))
    return emitSilenceableError() << "expected a gpu.launch";
  rewriter.modifyOpInPlace(target, [&] {
    if (getMinBlocksPerSmAttr())
      target->setAttr("kforge.min_blocks_per_sm", getMinBlocksPerSmAttr());
    if (getMaxRegistersAttr())
      target->setAttr("kforge.max_registers", getMaxRegistersAttr());
  });
  results.push_back(target);
  return DiagnosedSilenceableFailure::success();
}

void transform::SetKernelAttributesOp::getEffects(SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getTargetMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

namespace {
class KforgeTransformExtension : public transform::TransformDialectExtension<KforgeTransformExtension> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KforgeTransformExtension)
  using Base::Base;

  void init() {
    declareGeneratedDialect<tensor::TensorDialect>();
    declareGeneratedDialect<linalg::LinalgDialect>();
    declareGeneratedDialect<gpu::GPUDialect>();
    registerTransformOps<
#define GET_OP_LIST
#include "kforge/TransformOps/KforgeTransformOps.cpp.inc"
        >();
  }
};
} // namespace

void kforge::registerKforgeTransformExtension(DialectRegistry &registry) {
  registry.addExtensions<KforgeTransformExtension>();
}
