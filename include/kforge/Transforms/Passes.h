//===- Passes.h - kforge micro passes ---------------------------*- C++ -*-===//

#ifndef KFORGE_TRANSFORMS_PASSES_H
#define KFORGE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kforge {

#define GEN_PASS_DECL
#include "kforge/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kforge/Transforms/Passes.h.inc"

/// Runs kforge-normalize-importer on `module`: what kforge-compile and kforge-tune's payload analysis do
/// first with every payload, so importer IR (torch-mlir) takes the forms the schedules expect.
mlir::LogicalResult normalizeImporterPayload(mlir::ModuleOp module);

/// The name kforge-partition gives a dispatch function: `k_` and a hash of its content (not of its name or
/// visibility); kforge-apply-tuned looks schedules up by it.
std::string dispatchContentName(mlir::func::FuncOp dispatch);

/// True when `op` sits inside GPU device code (a gpu.launch body or a gpu.func).
bool isInsideGpuKernel(mlir::Operation *op);

/// Checks a pass's byte-alignment option: a positive power of two, else an error on `op` naming `option`.
mlir::LogicalResult checkAlignmentOption(mlir::Operation *op, llvm::StringRef option, int64_t value);

} // namespace kforge

#endif // KFORGE_TRANSFORMS_PASSES_H
