//===- KernelAttributes.cpp - launch bounds across kernel outlining -------===//
//
// Launch bounds, streaming stores and read-only inputs asked for on a gpu.launch
// (transform.kforge.set_kernel_attributes) survive outlining by name; streaming stores then become a ptxas option
// of the kernel's module (read-only inputs: InvariantInputLoads.cpp).
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/KernelRequests.h"
#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEPREPAREKERNELATTRIBUTES
#define GEN_PASS_DEF_KFORGEAPPLYKERNELATTRIBUTES
#define GEN_PASS_DEF_KFORGESTREAMINGSTORES
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

static constexpr llvm::StringLiteral kRecord = "kforge.kernel_attributes";
static constexpr llvm::StringLiteral kMinBlocks = kforge::requests::kMinBlocksPerSm;
using kforge::requests::kLoadL2Policy;
using kforge::requests::kMaxRegisters;
using kforge::requests::kReadOnlyInputs;
using kforge::requests::kStreamingStores;
/// Requests carried to the outlined kernel as they are, with their values (for passes after outlining).
static constexpr llvm::StringLiteral kCarriedRequests[] = {kStreamingStores, kReadOnlyInputs, kLoadL2Policy};
/// ptxas's default cache operator for global and generic stores: `.cs`, evict first (the same SASS as `st.cs`).
static constexpr llvm::StringLiteral kStreamingStoresOption = "-dscm=cs";

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
      bool carried = llvm::any_of(kCarriedRequests, [&](StringRef name) { return launch->hasAttr(name); });
      if (!minBlocks && !maxRegisters && !carried)
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
      for (StringRef name : kCarriedRequests)
        if (Attribute value = launch->getAttr(name))
          bounds.push_back(b.getNamedAttr(name, value));
      records.push_back(
          b.getNamedAttr((moduleName + "::" + launch.getFunctionAttr().getValue()).str(), b.getDictionaryAttr(bounds)));
      launch->removeAttr(kMinBlocks);
      launch->removeAttr(kMaxRegisters);
      for (StringRef name : kCarriedRequests)
        launch->removeAttr(name);
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

struct StreamingStoresPass : kforge::impl::KforgeStreamingStoresBase<StreamingStoresPass> {
  using Base::Base;

  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUModuleOp module) {
      gpu::GPUFuncOp asking;
      for (auto func : module.getOps<gpu::GPUFuncOp>()) {
        if (func->hasAttr(kStreamingStores) && !asking)
          asking = func;
        func->removeAttr(kStreamingStores); // a request, not an attribute of the LLVM function
      }
      if (!asking)
        return;
      ArrayAttr targets = module.getTargetsAttr();
      if (!targets || targets.empty()) {
        module.emitError() << "kernel '" << asking.getName()
                           << "' asks for streaming stores, but its module has no NVVM target (run after "
                              "nvvm-attach-target)";
        return signalPassFailure();
      }
      if (!assembled) {
        // At the kernel's location, not on the op: a warning need not print the whole kernel after it.
        emitWarning(asking.getLoc()) << "streaming stores take effect when ptxas assembles the kernel (format=bin or "
                                        "fatbin); this PTX keeps the default store cache operator";
        return;
      }
      SmallVector<Attribute> updated;
      for (Attribute attr : targets) {
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(attr);
        if (!target) {
          updated.push_back(attr);
          continue;
        }
        NamedAttrList flags(target.getFlags() ? target.getFlags() : b.getDictionaryAttr({}));
        SmallVector<Attribute> options;
        if (auto existing = flags.get("ptxas-cmd-options"))
          llvm::append_range(options, cast<ArrayAttr>(existing).getValue());
        if (!llvm::is_contained(options, b.getStringAttr(kStreamingStoresOption)))
          options.push_back(b.getStringAttr(kStreamingStoresOption));
        flags.set("ptxas-cmd-options", b.getArrayAttr(options));
        updated.push_back(NVVM::NVVMTargetAttr::get(&getContext(), target.getO(), target.getTriple(), target.getChip(),
                                                    target.getFeatures(), flags.getDictionary(&getContext()),
                                                    target.getLink(), target.getVerifyTarget()));
      }
      module.setTargetsAttr(b.getArrayAttr(updated));
    });
  }
};
} // namespace
