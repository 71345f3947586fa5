//===- KforgeTransformOps.h - transform.kforge.* ops ------------*- C++ -*-===//

#ifndef KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS_H
#define KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS_H

#include "kforge/TransformOps/KforgeTransformOpTraits.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/IR/OpImplementation.h"

#define GET_OP_CLASSES
#include "kforge/TransformOps/KforgeTransformOps.h.inc"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kforge {
/// Registers the transform.kforge.* ops as an extension of the transform dialect.
void registerKforgeTransformExtension(mlir::DialectRegistry &registry);
} // namespace kforge

#endif // KFORGE_TRANSFORMOPS_KFORGETRANSFORMOPS_H
