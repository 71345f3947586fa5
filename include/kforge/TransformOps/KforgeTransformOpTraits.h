//===- KforgeTransformOpTraits.h - what the transform.kforge.* ops share -*- C++ -*-===//
//
// The memory effects of the ops that rewrite their target in place, and the typed dispatch of every op's
// applyToOne, each written once (KforgeTransformOps.td attaches them through its base classes).
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPTRAITS_H
#define KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPTRAITS_H

#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

namespace kforge::transform {

/// Memory effects of a transform op that rewrites its target in place (or inside it) and returns it: it only
/// reads its handle, produces its results and modifies the payload. The counterpart of upstream's
/// FunctionalStyleTransformOpTrait, which consumes the handle.
template <typename OpTy>
class InPlaceTransformOpTrait : public mlir::OpTrait::TraitBase<OpTy, InPlaceTransformOpTrait> {
public:
  void getEffects(llvm::SmallVectorImpl<mlir::MemoryEffects::EffectInstance> &effects) {
    mlir::transform::onlyReadsHandle(this->getOperation()->getOpOperands(), effects);
    mlir::transform::producesHandle(this->getOperation()->getOpResults(), effects);
    mlir::transform::modifiesPayload(effects);
  }

  static llvm::LogicalResult verifyTrait(mlir::Operation *op) {
    if (!op->getName().getInterface<mlir::MemoryEffectOpInterface>())
      return op->emitError() << "InPlaceTransformOpTrait should only be attached to ops that implement "
                                "MemoryEffectOpInterface";
    return llvm::success();
  }
};

/// TransformEachOpTrait's apply for `op`, whose applyToOne takes one kind of payload op, except that a payload
/// op of another kind fails silenceably with `wrongTarget` (no note), as the ops said before their targets were
/// typed, where upstream's trait says "transform applied to the wrong op kind". The other targets are still
/// transformed, as by the trait.
template <typename TransformOp>
mlir::DiagnosedSilenceableFailure
applyToEach(TransformOp op, llvm::StringRef wrongTarget, mlir::transform::TransformRewriter &rewriter,
            mlir::transform::TransformResults &results, mlir::transform::TransformState &state) {
  using Target = typename llvm::function_traits<decltype(&TransformOp::applyToOne)>::template arg_t<1>;
  mlir::Value handle = op->getOperand(0);
  auto targets = state.getPayloadOps(handle);
  if (llvm::all_of(targets, [](mlir::Operation *target) { return llvm::isa<Target>(target); }))
    return static_cast<mlir::transform::TransformEachOpTrait<TransformOp> &>(op).apply(rewriter, results, state);

  // The trait's loop, one target at a time.
  if (state.getOptions().getExpensiveChecksEnabled() &&
      mlir::transform::isHandleConsumed(handle, llvm::cast<mlir::transform::TransformOpInterface>(op.getOperation())) &&
      failed(mlir::transform::detail::checkNestedConsumption(op.getLoc(), llvm::to_vector(targets))))
    return mlir::DiagnosedSilenceableFailure::definiteFailure();
  llvm::SmallVector<mlir::transform::ApplyToEachResultList, 1> applied;
  llvm::SmallVector<mlir::Diagnostic> silenceable;
  for (mlir::Operation *target : targets) {
    if (!llvm::isa<Target>(target)) {
      mlir::DiagnosedSilenceableFailure wrong = op.emitSilenceableError();
      wrong << wrongTarget;
      wrong.takeDiagnostics(silenceable);
      continue;
    }
    mlir::DiagnosedSilenceableFailure result = mlir::transform::detail::applyTransformToEach(
        op, rewriter, llvm::ArrayRef<mlir::Operation *>(target), applied, state);
    if (result.isDefiniteFailure())
      return result;
    if (result.isSilenceableFailure())
      result.takeDiagnostics(silenceable);
  }
  mlir::transform::detail::setApplyToOneResults(op, results, applied);
  return mlir::DiagnosedSilenceableFailure::silenceableFailure(std::move(silenceable));
}

} // namespace kforge::transform

#endif // KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPTRAITS_H
