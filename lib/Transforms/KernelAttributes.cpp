//===- KernelAttributes.cpp - launch bounds across kernel outlining -------===//

#include "kforge/Transforms/Passes.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEPREPAREKERNELATTRIBUTES
#define GEN_PASS_DEF_KFORGEAPPLYKERNELATTRIBUTES
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

static constexpr llvm::StringLiteral kRecord = "kforge.kernel_attributes";
static constexpr llvm::StringLiteral kMinBlocks = "kforge.min_blocks_per_sm";
static constexpr llvm::StringLiteral kMaxRegisters = "kforge.max_registers";

namespace {
struct PrepareKernelAttributesPass : kforge::impl::KforgePrepareKernelAttributesBase<PrepareKernelAttributesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(&getContext());
    SmallVector<NamedAttribute> records;
    unsigned counter = 0;
    module.walk([&](gpu::LaunchOp launch) {
      auto minBlocks = launch->getAttrOfType<IntegerAttr>(kMinBlocks);
      auto maxRegisters = launch->getAttrOfType<IntegerAttr>(kMaxRegisters);
      if (!minBlocks && !maxRegisters)
        return;
      if (!launch.getFunctionAttr()) {
        auto parent = launch->getParentOfType<FunctionOpInterface>();
        std::string name =
            (parent ? parent.getName().str() : std::string("kernel")) + "_kernel_bounded_" + std::to_string(counter++);
        launch.setFunctionAttr(FlatSymbolRefAttr::get(b.getStringAttr(name)));
        launch.setModuleAttr(FlatSymbolRefAttr::get(b.getStringAttr(name)));
      }
      StringRef moduleName =
          launch.getModuleAttr() ? launch.getModuleAttr().getValue() : launch.getFunctionAttr().getValue();
      SmallVector<NamedAttribute> bounds;
      if (minBlocks)
        bounds.push_back(b.getNamedAttr("nvvm.minctasm", b.getI32IntegerAttr(minBlocks.getInt())));
      if (maxRegisters)
        bounds.push_back(b.getNamedAttr("nvvm.maxnreg", b.getI32IntegerAttr(maxRegisters.getInt())));
      records.push_back(
          b.getNamedAttr((moduleName + "::" + launch.getFunctionAttr().getValue()).str(), b.getDictionaryAttr(bounds)));
      launch->removeAttr(kMinBlocks);
      launch->removeAttr(kMaxRegisters);
    });
    if (!records.empty())
      module->setAttr(kRecord, b.getDictionaryAttr(records));
  }
};

struct ApplyKernelAttributesPass : kforge::impl::KforgeApplyKernelAttributesBase<ApplyKernelAttributesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto records = module->getAttrOfType<DictionaryAttr>(kRecord);
    if (!records)
      return;
    for (NamedAttribute record : records) {
      auto [moduleName, functionName] = record.getName().getValue().split("::");
      auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(moduleName);
      auto kernel = gpuModule ? gpuModule.lookupSymbol<gpu::GPUFuncOp>(functionName) : nullptr;
      if (!kernel) {
        module.emitError() << "kernel '" << record.getName().getValue()
                           << "' with recorded launch bounds was not found after outlining";
        return signalPassFailure();
      }
      for (NamedAttribute bound : cast<DictionaryAttr>(record.getValue()))
        kernel->setAttr(bound.getName(), bound.getValue());
    }
    module->removeAttr(kRecord);
  }
};
} // namespace
