//===- ScheduleConfinement.cpp - what an untrusted schedule may do --------===//

#include "kforge/Transforms/ScheduleConfinement.h"
#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringSet.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGECONFINETRANSFORMSCRIPTS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// Families of transform ops that only rewrite the payload they are given: their
/// rewrites are fixed in the compiler, and no operand names a file or a symbol
/// outside the payload. Matched as name prefixes.
static constexpr llvm::StringLiteral kAllowedFamilies[] = {
    "transform.structured.",             // linalg tiling, fusion, vectorization, promotion, ...
    "transform.match.",                  // matchers
    "transform.apply_patterns.",         // pattern sets (upstream's fixed rewrites)
    "transform.apply_conversion_patterns.", "transform.bufferization.", "transform.gpu.", "transform.memref.",
    "transform.nvgpu.", "transform.loop.", "transform.tensor.", "transform.affine.", "transform.vector.",
    "transform.param.", "transform.debug.", "transform.kforge.",
};

/// Members of those families that can put arbitrary IR into the payload.
static constexpr llvm::StringLiteral kRefusedInFamilies[] = {
    "transform.structured.replace", // its region is payload IR of the script's choosing
};

/// The transform dialect's own ops: control flow, handles, matching. Not on the
/// list: PDL and IRDL (patterns that build arbitrary ops), and func.cast_and_call
/// (a call to any symbol).
static constexpr llvm::StringLiteral kAllowedCoreOps[] = {
    "transform.alternatives",  "transform.annotate",       "transform.apply_cse",
    "transform.apply_dce",     "transform.apply_licm",     "transform.apply_patterns",
    "transform.apply_conversion_patterns", "transform.apply_registered_pass", "transform.cast",
    "transform.collect_matching", "transform.foreach",     "transform.foreach_match",
    "transform.get_consumers_of_result", "transform.get_defining_op", "transform.get_operand",
    "transform.get_parent_op", "transform.get_producer_of_operand", "transform.get_result",
    "transform.get_type",      "transform.include",        "transform.merge_handles",
    "transform.named_sequence", "transform.num_associations", "transform.print",
    "transform.replicate",     "transform.select",         "transform.sequence",
    "transform.split_handle",  "transform.verify",         "transform.yield",
};

/// Registered passes a schedule may run with `transform.apply_registered_pass`: cleanups and lowerings that
/// have no option naming a file and write nothing but the IR.
static constexpr llvm::StringLiteral kAllowedPasses[] = {
    "canonicalize",         "cse",
    "loop-invariant-code-motion", "symbol-dce",
    "sccp",                 "lower-affine",
    "expand-strided-metadata", "fold-memref-alias-ops",
    "convert-linalg-to-loops", "linalg-generalize-named-ops",
    "linalg-fold-unit-extent-dims", "scf-forall-to-for",
    "affine-loop-normalize", "loop-invariant-subset-hoisting",
};

static bool isAllowedOpName(StringRef name) {
  if (llvm::is_contained(kRefusedInFamilies, name))
    return false;
  if (llvm::is_contained(kAllowedCoreOps, name))
    return true;
  return llvm::any_of(kAllowedFamilies, [&](StringRef family) { return name.starts_with(family); });
}

/// Upstream tiling ops accept sizes their implementation then crashes on (all zero: nothing to tile; a negative
/// thread count). Refused here, before the op runs.
static LogicalResult checkTileSizes(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (!name.starts_with("transform.structured.tile_"))
    return success();
  for (StringRef attrName : {"static_tile_sizes", "static_num_threads", "tile_sizes", "num_threads"}) {
    auto sizes = op->getAttrOfType<DenseI64ArrayAttr>(attrName);
    if (!sizes || sizes.empty())
      continue;
    if (llvm::any_of(sizes.asArrayRef(), [](int64_t size) { return size < 0 && !ShapedType::isDynamic(size); }))
      return op->emitError() << "'" << name << "' has a negative value in " << attrName;
    bool hasDynamic = llvm::any_of(sizes.asArrayRef(), ShapedType::isDynamic);
    if (!hasDynamic && llvm::all_of(sizes.asArrayRef(), [](int64_t size) { return size == 0; }))
      return op->emitError() << "'" << name << "' has only zeros in " << attrName << ": it would tile nothing";
  }
  return success();
}

/// Checks one op of a script (not its nested ops).
static LogicalResult checkScriptOp(Operation *op, kforge::ScheduleTrust trust) {
  if (trust == kforge::ScheduleTrust::Trusted)
    return checkTileSizes(op);
  StringRef name = op->getName().getStringRef();
  if (!isa_and_nonnull<transform::TransformDialect>(op->getDialect()))
    return op->emitError() << "'" << name << "' is not a transform op and may not appear in a schedule "
                           << kforge::kTrustedHint;
  if (!isAllowedOpName(name))
    return op->emitError() << "'" << name << "' is not allowed in a schedule: it can reach outside the payload "
                           << kforge::kTrustedHint;
  if (auto pass = dyn_cast<transform::ApplyRegisteredPassOp>(op)) {
    if (!llvm::is_contained(kAllowedPasses, pass.getPassName()))
      return op->emitError() << "pass '" << pass.getPassName()
                             << "' is not allowed in a schedule (allowed: canonicalize, cse, symbol-dce and other "
                                "passes that touch nothing but the IR) "
                             << kforge::kTrustedHint;
  }
  if (auto annotate = dyn_cast<transform::AnnotateOp>(op)) {
    // An attribute is an instruction to a later lowering (linkage, sections, module assembly): only kforge's own.
    if (!annotate.getName().starts_with("kforge."))
      return op->emitError() << "a schedule may only annotate payload ops with kforge.* attributes, not '"
                             << annotate.getName() << "' " << kforge::kTrustedHint;
  }
  return checkTileSizes(op);
}

static bool isTransformOp(Operation *op) { return isa_and_nonnull<transform::TransformDialect>(op->getDialect()); }

bool kforge::containsTransformScript(Operation *root) {
  bool found = false;
  root->walk([&](Operation *op) {
    if (!isTransformOp(op))
      return WalkResult::advance();
    found = true;
    return WalkResult::interrupt();
  });
  return found;
}

LogicalResult kforge::checkScheduleConfined(Operation *root, ScheduleTrust trust) {
  bool ok = true;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isTransformOp(op))
      return WalkResult::advance();
    // The outermost op of a script: it and everything inside it must pass.
    op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
      if (failed(checkScriptOp(inner, trust))) {
        ok = false;
        return WalkResult::skip(); // one error per offending op, not one per op inside it
      }
      return WalkResult::advance();
    });
    return WalkResult::skip();
  });
  return success(ok);
}

namespace {
struct ConfineTransformScriptsPass : kforge::impl::KforgeConfineTransformScriptsBase<ConfineTransformScriptsPass> {
  using Base::Base;

  void runOnOperation() override {
    kforge::ScheduleTrust trust = trusted ? kforge::ScheduleTrust::Trusted : kforge::ScheduleTrust::Untrusted;
    auto *dialect = getContext().getLoadedDialect<transform::TransformDialect>();
    ModuleOp library = dialect ? dialect->getLibraryModule() : ModuleOp();
    bool libraryOk = !library || succeeded(kforge::checkScheduleConfined(library, trust));
    if (!libraryOk || failed(kforge::checkScheduleConfined(getOperation(), trust)))
      signalPassFailure();
  }
};
} // namespace
