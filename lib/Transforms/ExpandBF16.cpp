//===- ExpandBF16.cpp - bf16 conversions as integer arithmetic ------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEEXPANDBF16
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct ExpandBF16Pass : kforge::impl::KforgeExpandBF16Base<ExpandBF16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
