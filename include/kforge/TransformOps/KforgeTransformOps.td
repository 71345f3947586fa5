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

def SetKernelAttributesOp : Op<Transform_Dialect, "kforge.set_kernel_attributes",
    [FunctionalStyleTransformOpTrait, MemoryEffectsOpInterface, TransformEachOpTrait,
     TransformOpInterface, ReportTrackingListenerFailuresOpTrait]> {
  let summary = "Ask for register and occupancy limits on the kernel a gpu.launch becomes";
  let description = [{
    Records on each targeted `gpu.launch` the launch bounds its kernel should be compiled
    with: `min_blocks_per_sm` (PTX `.minnctapersm`: the compiler limits registers so that
    many blocks fit on a multiprocessor) and/or `max_registers` (PTX `.maxnreg`). The
    attributes survive outlining through kforge's lowering pipeline
    (`kforge-prepare-kernel-attributes` / `kforge-apply-kernel-attributes`), which puts
    them on the outlined kernel as `nvvm.minctasm` / `nvvm.maxnreg`. Register pressure
    is the largest single lever recorded for SIMT matmul in shared/TOOLCHAIN.md.

    #### Return modes

    Produces a silenceable failure, leaving the IR untouched, if a target is not a
    `gpu.launch`. Fails definitely when neither limit is given or a limit is not
    positive (max_registers must be at most 255).
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       OptionalAttr<I64Attr>:$min_blocks_per_sm,
                       OptionalAttr<I64Attr>:$max_registers);
  let results = (outs TransformHandleTypeInterface:$transformed);
  let assemblyFormat = "$target attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::DiagnosedSilenceableFailure applyToOne(
        ::mlir::transform::TransformRewriter &rewriter, ::mlir::Operation *target,
        ::mlir::transform::ApplyToEachResultList &results, ::mlir::transform::TransformState &state);
    void getEffects(
        ::llvm::SmallVectorImpl<::mlir::MemoryEffects::EffectInstance> &effects);
  }];
}

#endif // KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS
