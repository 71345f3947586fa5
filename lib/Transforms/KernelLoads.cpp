//===- KernelLoads.cpp - cache behaviour of a kernel's loads from its buffers -===//
//
// See the pass descriptions in Passes.td. Two requests a kernel can make about how it loads from the buffers it
// receives, both applied after the NVVM lowering (the loads are llvm.load by then):
//  - read_only_inputs (kforge-invariant-input-loads): the loads from each pointer argument that the kernel only
//    ever loads from are marked invariant, which NVPTX emits as ld.global.nc;
//  - load_l2_policy (kforge-l2-load-policy): checked and recorded as an LLVM function attribute, for which
//    kforge-gpu-module-to-binary then writes every load from a pointer argument with an L2 cache policy
//    (evict_first / evict_last) as inline PTX (L2LoadPolicy.cpp), since NVPTX has no such load.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/KernelRequests.h"
#include "kforge/Transforms/L2LoadPolicy.h"
#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEINVARIANTINPUTLOADS
#define GEN_PASS_DEF_KFORGEL2LOADPOLICY
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

using kforge::requests::kLoadL2Policy;
using kforge::requests::kReadOnlyInputs;

namespace {
/// What a kernel does with one of its pointer arguments.
struct PointerLoads {
  /// The plain (not volatile, not atomic) loads through it and through the pointers derived from it by address
  /// arithmetic (getelementptr on it, address-space casts).
  SmallVector<LLVM::LoadOp> loads;
  /// Those loads are all that is done with it: no other use could write through it or let it escape (a store
  /// to or of it, a call, an integer cast, a branch argument, a volatile or atomic access...).
  bool onlyLoaded = true;
};
} // namespace

static PointerLoads loadsThrough(Value pointer) {
  PointerLoads result;
  SmallVector<Value> derived{pointer};
  while (!derived.empty()) {
    Value value = derived.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto load = dyn_cast<LLVM::LoadOp>(user)) {
        if (load.getVolatile_() || load.getOrdering() != LLVM::AtomicOrdering::not_atomic)
          result.onlyLoaded = false; // ordered or volatile: the program asked for this very access
        else
          result.loads.push_back(load);
        continue;
      }
      if (auto gep = dyn_cast<LLVM::GEPOp>(user); gep && gep.getBase() == value) {
        derived.push_back(gep.getResult());
        continue;
      }
      if (isa<LLVM::AddrSpaceCastOp>(user)) {
        derived.push_back(user->getResult(0));
        continue;
      }
      result.onlyLoaded = false;
    }
  }
  return result;
}

namespace {
struct InvariantInputLoadsPass : kforge::impl::KforgeInvariantInputLoadsBase<InvariantInputLoadsPass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (!func->hasAttr(kReadOnlyInputs))
        return;
      func->removeAttr(kReadOnlyInputs); // a request, not an attribute of the LLVM function
      if (func.isExternal())
        return;
      for (BlockArgument argument : func.getArguments()) {
        if (!isa<LLVM::LLVMPointerType>(argument.getType()))
          continue;
        PointerLoads uses = loadsThrough(argument);
        if (!uses.onlyLoaded)
          continue;
        for (LLVM::LoadOp load : uses.loads)
          load.setInvariant(true);
      }
    });
  }
};

/// The compute capability of an NVVM target's chip ("sm_90a": 90), or 0 if it names none.
static int computeCapability(NVVM::NVVMTargetAttr target) {
  StringRef chip = target.getChip();
  int value = 0;
  if (!chip.consume_front("sm_") || chip.take_while(llvm::isDigit).getAsInteger(10, value))
    return 0;
  return value;
}

struct L2LoadPolicyPass : kforge::impl::KforgeL2LoadPolicyBase<L2LoadPolicyPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    WalkResult walked = module.walk([&](LLVM::LLVMFuncOp func) {
      auto request = func->getAttrOfType<StringAttr>(kLoadL2Policy);
      if (!request) {
        if (func->hasAttr(kLoadL2Policy)) {
          func.emitError() << "'" << kLoadL2Policy << "' must be a string (evict_first or evict_last)";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      func->removeAttr(kLoadL2Policy); // a request, not an attribute of the LLVM function
      StringRef policy = request.getValue();
      if (policy != "evict_first" && policy != "evict_last") {
        func.emitError() << "unknown L2 load policy '" << policy << "' (expected evict_first or evict_last)";
        return WalkResult::interrupt();
      }
      if (ArrayAttr targets = module.getTargetsAttr())
        for (Attribute attr : targets)
          if (auto target = dyn_cast<NVVM::NVVMTargetAttr>(attr);
              target && computeCapability(target) && computeCapability(target) < 80) {
            func.emitError() << "an L2 load policy needs sm_80 or later (createpolicy); the target is "
                             << target.getChip();
            return WalkResult::interrupt();
          }
      // Bulk copies from global into shared memory (pipeline_rows' rows) take the policy as their L2 cache
      // hint here; L2 prefetches (prefetch_rows) are left as they are.
      SmallVector<NVVM::CpAsyncBulkGlobalToSharedClusterOp> copies;
      func.walk([&](NVVM::CpAsyncBulkGlobalToSharedClusterOp copy) {
        if (!copy.getL2CacheHint())
          copies.push_back(copy);
      });
      if (!copies.empty() && !func.isExternal()) {
        OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
        Value hint =
            LLVM::InlineAsmOp::create(b, func.getLoc(), b.getI64Type(), ValueRange{}, kforge::createPolicyPtx(policy),
                                      "=l", /*has_side_effects=*/false, /*is_align_stack=*/false,
                                      LLVM::tailcallkind::TailCallKind::None, nullptr, nullptr)
                .getRes();
        for (NVVM::CpAsyncBulkGlobalToSharedClusterOp copy : copies)
          copy.getL2CacheHintMutable().assign(hint);
      }
      // The loads are rewritten in the LLVM IR, after LLVM has optimised and vectorised them
      // (kforge-gpu-module-to-binary): the request travels as a function attribute.
      SmallVector<Attribute> passthrough;
      if (ArrayAttr existing = func.getPassthroughAttr())
        llvm::append_range(passthrough, existing.getValue());
      Builder b(func.getContext());
      passthrough.push_back(b.getArrayAttr({b.getStringAttr(kforge::kL2LoadPolicyFunctionAttribute), request}));
      func.setPassthroughAttr(b.getArrayAttr(passthrough));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
