//===- KforgeTransformOps.cpp - transform.kforge.* ops --------------------===//

#include "kforge/TransformOps/KforgeTransformOps.h"
#include "kforge/Transforms/KernelRequests.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
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
  if (!getMinBlocksPerSm() && !getMaxRegisters() && !getStreamingStores() && !getReadOnlyInputs() &&
      !getLoadL2Policy())
    return emitOpError() << "needs at least one of min_blocks_per_sm, max_registers, streaming_stores, "
                            "read_only_inputs and load_l2_policy";
  if (getLoadL2Policy() && *getLoadL2Policy() != "evict_first" && *getLoadL2Policy() != "evict_last")
    return emitOpError() << "load_l2_policy must be \"evict_first\" or \"evict_last\", not \""
                         << *getLoadL2Policy() << "\"";
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
      target->setAttr(kforge::requests::kMinBlocksPerSm, getMinBlocksPerSmAttr());
    if (getMaxRegistersAttr())
      target->setAttr(kforge::requests::kMaxRegisters, getMaxRegistersAttr());
    if (getStreamingStores())
      target->setAttr(kforge::requests::kStreamingStores, rewriter.getUnitAttr());
    if (getReadOnlyInputs())
      target->setAttr(kforge::requests::kReadOnlyInputs, rewriter.getUnitAttr());
    if (getLoadL2PolicyAttr())
      target->setAttr(kforge::requests::kLoadL2Policy, getLoadL2PolicyAttr());
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
// FuseElementwiseProducersOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure transform::FuseElementwiseProducersOp::applyToOne(
    transform::TransformRewriter &rewriter, Operation *target, transform::ApplyToEachResultList &results,
    transform::TransformState &state) {
  // One fusion at a time, then look again: each fusion erases its consumer (which may itself be a producer)
  // and may leave its producer unused. A walk visits producers before their consumers in a block, so a chain
  // a -> b -> c fuses a into b first.
  auto nextFusable = [&]() -> OpOperand * {
    OpOperand *found = nullptr;
    target->walk([&](linalg::GenericOp producer) {
      if (producer == target || producer.getNumReductionLoops() != 0 || producer->getNumResults() != 1 ||
          !producer.hasPureTensorSemantics())
        return WalkResult::advance();
      for (OpOperand &use : producer->getResult(0).getUses()) {
        auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
        if (consumer && target->isProperAncestor(consumer) && linalg::areElementwiseOpsFusable(&use)) {
          found = &use;
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    return found;
  };
  // Bounded: every fusion removes one use of an elementwise producer from a consumer; the bound only guards
  // against a fusion that would not (upstream refusing after matching).
  for (int fusions = 0; OpOperand *use = nextFusable(); ++fusions) {
    if (fusions > 1000)
      return emitDefiniteFailure() << "elementwise fusion did not finish after 1000 fusions";
    Operation *producer = use->get().getDefiningOp();
    auto consumer = cast<linalg::GenericOp>(use->getOwner());
    rewriter.setInsertionPoint(consumer); // where the fused op goes (a pattern's rewriter would be there)
    FailureOr<linalg::ElementwiseOpFusionResult> fusion = linalg::fuseElementwiseOps(rewriter, use);
    if (failed(fusion))
      return emitDefiniteFailure() << "upstream elementwise fusion failed on a pair it reported fusable";
    // Only the consumer's results are replaced: the producer's other users keep the producer.
    for (auto [original, replacement] : fusion->replacements)
      if (original.getDefiningOp() != producer)
        rewriter.replaceAllUsesWith(original, replacement);
    rewriter.eraseOp(consumer);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
  }
  // A fused op keeps the producer's result as an output while the producer had other users: drop the
  // outputs nobody reads.
  RewritePatternSet patterns(getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  if (failed(applyPatternsGreedily(target, std::move(patterns))))
    return emitDefiniteFailure() << "erasing the fused ops' unused results did not converge";
  results.push_back(target);
  return DiagnosedSilenceableFailure::success();
}

void transform::FuseElementwiseProducersOp::getEffects(SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
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
    declareGeneratedDialect<scf::SCFDialect>();
    declareGeneratedDialect<arith::ArithDialect>();
    declareGeneratedDialect<affine::AffineDialect>();
    declareGeneratedDialect<memref::MemRefDialect>();
    declareGeneratedDialect<vector::VectorDialect>();
    declareGeneratedDialect<LLVM::LLVMDialect>();
    declareGeneratedDialect<NVVM::NVVMDialect>();
    declareGeneratedDialect<nvgpu::NVGPUDialect>();
    declareGeneratedDialect<math::MathDialect>();
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
