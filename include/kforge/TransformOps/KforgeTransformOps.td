//===- KforgeTransformOps.td - transform.kforge.* ops ------*- tablegen -*-===//
//
// kforge's own transform ops, for steps upstream MLIR has no op for. They live in one
// extension of the transform dialect, registered by registerKforgeTransformExtension.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS
#define KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Dialect/Transform/IR/TransformTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

def OutsToEmptyOp : Op<Transform_Dialect, "kforge.outs_to_empty",
    [FunctionalStyleTransformOpTrait, MemoryEffectsOpInterface, TransformEachOpTrait,
     TransformOpInterface, ReportTrackingListenerFailuresOpTrait]> {
  let summary = "Give a linalg op fresh tensor.empty outputs where it never reads them";
  let description = [{
    For each tensor output (`outs` operand) of the target linalg op whose value the
    op's body never reads (an elementwise op that overwrites its output), replaces the
    operand with a new `tensor.empty` of the same type.

    Why: importers and CSE often make several ops write into the same `tensor.empty`,
    so after tile-and-fuse an intermediate op may write into a slice of the kernel's
    output. Promoting such an intermediate to shared memory then copies the output
    slice in first, and that block-wide copy races with the threads' writes. With an
    empty destination no copy is needed.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target op is not a
    linalg op with tensor semantics. Succeeds (possibly changing nothing) otherwise.
    Returns a handle to the updated op, which is modified in place.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let assemblyFormat = "$target attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    ::mlir::DiagnosedSilenceableFailure applyToOne(
        ::mlir::transform::TransformRewriter &rewriter, ::mlir::Operation *target,
        ::mlir::transform::ApplyToEachResultList &results, ::mlir::transform::TransformState &state);
    void getEffects(
        ::llvm::SmallVectorImpl<::mlir::MemoryEffects::EffectInstance> &effects);
  }];
}

def CopyToLinalgOp : Op<Transform_Dialect, "kforge.copy_to_linalg",
    [FunctionalStyleTransformOpTrait, MemoryEffectsOpInterface, TransformEachOpTrait,
     TransformOpInterface, ReportTrackingListenerFailuresOpTrait]> {
  let summary = "Rewrite a memref.copy as an equivalent linalg.copy";
  let description = [{
    Replaces each targeted `memref.copy` between ranked memrefs with a `linalg.copy`
    of the same operands and returns handles to the new ops. Upstream promotion
    (`transform.structured.promote`) emits `memref.copy`, which cannot be tiled;
    `linalg.copy` implements TilingInterface, so the copy can then be split over
    threads (cooperative copies into shared memory).

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not a
    `memref.copy` between ranked memrefs.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let assemblyFormat = "$target attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    ::mlir::DiagnosedSilenceableFailure applyToOne(
        ::mlir::transform::TransformRewriter &rewriter, ::mlir::Operation *target,
        ::mlir::transform::ApplyToEachResultList &results, ::mlir::transform::TransformState &state);
    void getEffects(
        ::llvm::SmallVectorImpl<::mlir::MemoryEffects::EffectInstance> &effects);
  }];
}

#endif // KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS
