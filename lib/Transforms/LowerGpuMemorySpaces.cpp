//===- LowerGpuMemorySpaces.cpp - #gpu.address_space -> NVVM numbers -----===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGELOWERGPUMEMORYSPACES
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

static unsigned getNVVMAddressSpace(gpu::AddressSpace space) {
  switch (space) {
  case gpu::AddressSpace::Global:
    return static_cast<unsigned>(NVVM::NVVMMemorySpace::Global);
  case gpu::AddressSpace::Workgroup:
    return static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared);
  case gpu::AddressSpace::Private:
    return static_cast<unsigned>(NVVM::NVVMMemorySpace::Local);
  }
  llvm_unreachable("unknown gpu address space");
}

namespace {
struct LowerGpuMemorySpacesPass : kforge::impl::KforgeLowerGpuMemorySpacesBase<LowerGpuMemorySpacesPass> {
  void runOnOperation() override {
    AttrTypeReplacer replacer;
    replacer.addReplacement([](gpu::AddressSpaceAttr attr) -> std::optional<Attribute> {
      return IntegerAttr::get(IntegerType::get(attr.getContext(), 64), getNVVMAddressSpace(attr.getValue()));
    });
    replacer.recursivelyReplaceElementsIn(getOperation(), /*replaceAttrs=*/true, /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
  }
};
} // namespace
