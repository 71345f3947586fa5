//===- ApplyTuned.cpp - a tuning database's schedules applied to a module's dispatches ===//
//
// See the pass description in Passes.td. Each function is scheduled exactly as kforge-compile scheduled it
// for the tuner (alone in a module, public, named by its content, normalized, then the schedule preloaded and
// interpreted), so the kernel is the tuner's kernel; it then replaces the function in the module, and the
// calls of the function are given the buffers it now takes.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"
#include "kforge/Transforms/ScheduleConfinement.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEAPPLYTUNED
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {

/// `function` scheduled by the transform library at `schedulePath`, in a module of its own (as the tuner's
/// payload was): the scheduled function, or failure with an error.
FailureOr<OwningOpRef<ModuleOp>> scheduleAlone(func::FuncOp function, StringRef name, StringRef schedulePath) {
  MLIRContext *context = function.getContext();
  OwningOpRef<ModuleOp> library = parseSourceFile<ModuleOp>(schedulePath, context);
  if (!library)
    return function.emitError("kforge-apply-tuned: cannot parse the schedule ") << schedulePath;
  // A database is a file anyone could have written: the same confinement as any untrusted schedule.
  if (failed(kforge::checkScheduleConfined(*library, kforge::ScheduleTrust::Untrusted)))
    return function.emitError("kforge-apply-tuned: the schedule ") << schedulePath << " is refused (above)";

  OwningOpRef<ModuleOp> alone = ModuleOp::create(function.getLoc());
  auto copy = cast<func::FuncOp>(function->clone());
  copy.setSymName(name);
  copy.setPublic();
  alone->getBody()->push_back(copy);
  if (failed(kforge::normalizeImporterPayload(*alone)))
    return function.emitError("kforge-apply-tuned: cannot normalize ") << name;
  // What -transform-preload-library + -transform-interpreter do, with the library held here: the preload
  // pass keeps it in the context, where a second function's library would clash with the first.
  transform::TransformOpInterface entry = transform::detail::findTransformEntryPoint(*alone, *library);
  if (!entry)
    return function.emitError("kforge-apply-tuned: the schedule ") << schedulePath << " has no entry point";
  if (failed(transform::applyTransformNamedSequence(*alone, entry, *library, transform::TransformOptions())))
    return function.emitError("kforge-apply-tuned: the schedule ")
           << schedulePath << " no longer applies to " << name << " (a stale database entry?)";
  return alone;
}

/// The calls of `function` rewritten for `scheduled`'s signature: tensors handed over as buffers
/// (bufferization.to_buffer) and the buffers it returns taken back as tensors (to_tensor, restrict: each is a
/// fresh allocation of the kernel's).
LogicalResult rewriteCalls(ModuleOp module, func::FuncOp function, func::FuncOp scheduled,
                           ArrayRef<bool> readOnly) {
  std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(function, module);
  if (!uses)
    return function.emitError("kforge-apply-tuned: cannot find the uses of ") << function.getSymName();
  FunctionType type = scheduled.getFunctionType();
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call)
      return use.getUser()->emitError("kforge-apply-tuned: a use of a scheduled function that is not a call");
    if (call.getNumOperands() != type.getNumInputs() || call.getNumResults() != type.getNumResults())
      return call.emitError("kforge-apply-tuned: the scheduled function's signature does not match this call");
    OpBuilder builder(call);
    SmallVector<Value> operands;
    for (auto [operand, wanted, onlyRead] : llvm::zip(call.getOperands(), type.getInputs(), readOnly)) {
      if (operand.getType() == wanted) {
        operands.push_back(operand);
        continue;
      }
      auto memref = dyn_cast<MemRefType>(wanted);
      if (!memref || !isa<TensorType>(operand.getType()))
        return call.emitError("kforge-apply-tuned: cannot pass ") << operand.getType() << " as " << wanted;
      auto buffer = bufferization::ToBufferOp::create(builder, call.getLoc(), memref, operand);
      if (onlyRead)
        buffer.setReadOnly(true); // the caller's arguments stay inputs (kforge-compile's roles)
      operands.push_back(buffer);
    }
    auto replacement = func::CallOp::create(builder, call.getLoc(), scheduled.getSymName(), type.getResults(),
                                            operands);
    for (auto [old, fresh] : llvm::zip(call.getResults(), replacement.getResults())) {
      Value value = fresh;
      if (old.getType() != fresh.getType())
        value = bufferization::ToTensorOp::create(builder, call.getLoc(), old.getType(), fresh,
                                                  /*restrict=*/true, /*writable=*/true);
      old.replaceAllUsesWith(value);
    }
    call.erase();
  }
  return success();
}

struct KforgeApplyTuned : kforge::impl::KforgeApplyTunedBase<KforgeApplyTuned> {
  using KforgeApplyTunedBase::KforgeApplyTunedBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (database.empty()) {
      module.emitError("kforge-apply-tuned: no database (db=PATH)");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> functions;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        functions.push_back(function);
    for (func::FuncOp function : functions) {
      std::string name = kforge::dispatchContentName(function);
      SmallString<256> schedule(database);
      llvm::sys::path::append(schedule, target, name, "best.mlir");
      if (!llvm::sys::fs::exists(schedule))
        continue; // untuned: left as it is, for the default lowering
      // An argument the function only reads (never an op's destination) cannot be written by its kernel:
      // one-shot bufferization writes in place only into a destination's buffer.
      SmallVector<bool> readOnly;
      for (BlockArgument argument : function.getArguments())
        readOnly.push_back(llvm::none_of(argument.getUses(), [](OpOperand &use) {
          auto destination = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
          return !destination || destination.isDpsInit(&use);
        }));
      FailureOr<OwningOpRef<ModuleOp>> alone = scheduleAlone(function, name, schedule);
      if (failed(alone))
        return signalPassFailure();
      auto scheduled = (**alone).lookupSymbol<func::FuncOp>(name);
      if (!scheduled) {
        function.emitError("kforge-apply-tuned: the schedule ") << schedule << " removed the function";
        return signalPassFailure();
      }
      // The tuned kernel under the function's own name and visibility, next to it; then the calls, then swap.
      auto copy = cast<func::FuncOp>(scheduled->clone());
      copy.setSymName((function.getSymName() + "__tuned").str());
      copy.setVisibility(function.getVisibility());
      module.getBody()->getOperations().insert(function->getIterator(), copy);
      // Whatever else the schedule left at module level (outlined GPU modules) comes along.
      for (Operation &op : llvm::make_early_inc_range((**alone).getBody()->getOperations()))
        if (&op != scheduled.getOperation() && !isa<func::FuncOp>(op))
          op.moveBefore(copy);
      if (failed(rewriteCalls(module, function, copy, readOnly)))
        return signalPassFailure();
      StringAttr original = function.getSymNameAttr();
      function.erase();
      copy.setSymNameAttr(original);
      module.walk([&](func::CallOp call) {
        if (call.getCallee() == (original.getValue() + "__tuned").str())
          call.setCallee(original.getValue());
      });
    }
  }
};

} // namespace
