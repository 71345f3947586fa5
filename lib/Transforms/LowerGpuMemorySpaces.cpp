//===- LowerGpuMemorySpaces.cpp - #gpu.address_space -> NVVM numbers -----===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

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

/// The dynamic shared memory's base: 1024-byte aligned (what TMA's swizzled tiles need; every smaller
/// alignment follows).
constexpr uint64_t kDynamicSharedAlignment = 1024;

/// gpu.dynamic_shared_memory as convert-gpu-to-nvvm lowers it (a zero-sized external array in the shared
/// address space, which PTX places after the static shared memory), done here because the op's verifier
/// insists on #gpu.address_space<workgroup> and this pass is about to replace that: its result becomes a
/// memref descriptor on the array's address, cast (unrealized, reconciled after the memref lowering) to the
/// numeric address space's memref<?xi8, 3>.
static void lowerDynamicSharedMemory(gpu::GPUModuleOp module) {
  SmallVector<gpu::DynamicSharedMemoryOp> ops;
  module.walk([&](gpu::DynamicSharedMemoryOp op) { ops.push_back(op); });
  if (ops.empty())
    return;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  unsigned shared = static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared);
  auto arrayType = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), 0);
  b.setInsertionPointToStart(module.getBody());
  SymbolTable symbols(module);
  auto global = LLVM::GlobalOp::create(b, module.getLoc(), arrayType, /*isConstant=*/false, LLVM::Linkage::External,
                                       "__kforge_dynamic_shared", Attribute(), kDynamicSharedAlignment, shared);
  symbols.insert(global);
  auto pointer = LLVM::LLVMPointerType::get(ctx, shared);
  Type i64 = IntegerType::get(ctx, 64);
  auto rank1 = LLVM::LLVMArrayType::get(i64, 1);
  auto descriptorType = LLVM::LLVMStructType::getLiteral(ctx, {pointer, pointer, i64, rank1, rank1});
  auto memrefType = MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8), MemRefLayoutAttrInterface(),
                                    IntegerAttr::get(i64, shared));
  for (gpu::DynamicSharedMemoryOp op : ops) {
    b.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value base = LLVM::AddressOfOp::create(b, loc, pointer, global.getSymName());
    auto constant = [&](int64_t v) { return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v)); };
    Value descriptor = LLVM::UndefOp::create(b, loc, descriptorType);
    descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, base, ArrayRef<int64_t>{0});
    descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, base, ArrayRef<int64_t>{1});
    descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, constant(0), ArrayRef<int64_t>{2});
    // The size is the launch's; nothing reads it (views take the base and a byte offset).
    descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, constant(0), ArrayRef<int64_t>{3, 0});
    descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, constant(1), ArrayRef<int64_t>{4, 0});
    Value memref = UnrealizedConversionCastOp::create(b, loc, memrefType, descriptor).getResult(0);
    op.getResult().replaceAllUsesWith(memref);
    op.erase();
  }
}

namespace {
struct LowerGpuMemorySpacesPass : kforge::impl::KforgeLowerGpuMemorySpacesBase<LowerGpuMemorySpacesPass> {
  void runOnOperation() override {
    lowerDynamicSharedMemory(getOperation());
    AttrTypeReplacer replacer;
    replacer.addReplacement([](gpu::AddressSpaceAttr attr) -> std::optional<Attribute> {
      return IntegerAttr::get(IntegerType::get(attr.getContext(), 64), getNVVMAddressSpace(attr.getValue()));
    });
    replacer.recursivelyReplaceElementsIn(getOperation(), /*replaceAttrs=*/true, /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
  }
};
} // namespace
