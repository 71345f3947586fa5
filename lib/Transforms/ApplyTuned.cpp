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
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEAPPLYTUNED
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {

/// Where the pass finds each function's schedule: a tuning database's directory (db=, one best.mlir per
/// entry, parsed when used) or one tuned library file (library=, parsed once, its entries indexed by the content
/// name each is keyed by).
class ScheduleSource {
public:
  /// The source the options name, or failure with an error on `payload`.
  static FailureOr<ScheduleSource> open(ModuleOp payload, StringRef database, StringRef library, StringRef target,
                                        bool targetGiven);

  /// The schedule of the function whose content name is `name` (a transform library), nullptr when there is
  /// none (the function stays untuned), or failure with an error on `function`. `where` names it in messages.
  FailureOr<ModuleOp> find(func::FuncOp function, StringRef name, std::string &where);

private:
  std::string database, target, libraryPath;
  OwningOpRef<ModuleOp> library;     // the parsed tuned library (library=)
  llvm::StringMap<ModuleOp> entries; // its schedules by content name
  OwningOpRef<ModuleOp> parsed;      // the database entry last parsed (db=)
};

/// The format a tuned library declares (kforge-db export writes it; docs/models.md).
constexpr StringLiteral kTunedLibraryFormat = "kforge-tuned/1";

FailureOr<ScheduleSource> ScheduleSource::open(ModuleOp payload, StringRef database, StringRef library,
                                               StringRef target, bool targetGiven) {
  // Errors name locations only: the note MLIR attaches to an op's error would print the whole model or library.
  if (database.empty() == library.empty()) {
    if (database.empty())
      return emitError(payload.getLoc(), "kforge-apply-tuned: no schedules: give db=DIR (a tuning database) or "
                                         "library=FILE (a tuned library)");
    return emitError(payload.getLoc(), "kforge-apply-tuned: db= and library= are both given: give one");
  }
  ScheduleSource source;
  source.database = database.str();
  source.target = target.str();
  if (library.empty())
    return source;
  source.libraryPath = library.str();
  source.library = parseSourceFile<ModuleOp>(library, payload.getContext());
  if (!source.library)
    return emitError(payload.getLoc(), "kforge-apply-tuned: cannot parse the tuned library ") << library;
  ModuleOp outer = *source.library;
  auto format = outer->getAttrOfType<StringAttr>("kforge.tuned_library");
  if (!format)
    return emitError(outer.getLoc(), "kforge-apply-tuned: ")
           << library << " is not a tuned library (no kforge.tuned_library attribute; kforge-db export writes one)";
  if (format.getValue() != kTunedLibraryFormat)
    return emitError(outer.getLoc(), "kforge-apply-tuned: the tuned library ")
           << library << " has format " << format << ", this kforge reads \"" << kTunedLibraryFormat << "\"";
  auto libraryTarget = outer->getAttrOfType<StringAttr>("kforge.target");
  if (!libraryTarget)
    return emitError(outer.getLoc(), "kforge-apply-tuned: the tuned library ") << library << " has no kforge.target";
  if (targetGiven && libraryTarget.getValue() != target)
    return emitError(payload.getLoc(), "kforge-apply-tuned: the tuned library ")
           << library << " is for target " << libraryTarget.getValue() << ", not target=" << target;
  source.target = libraryTarget.getValue().str();
  for (Operation &op : outer.getBody()->getOperations()) {
    auto entry = dyn_cast<ModuleOp>(op);
    if (!entry)
      return emitError(op.getLoc(), "kforge-apply-tuned: a tuned library holds modules only (one schedule each)");
    auto name = entry->getAttrOfType<StringAttr>("kforge.content_name");
    if (!name)
      return emitError(entry.getLoc(), "kforge-apply-tuned: a tuned library's module has no kforge.content_name");
    if (!entry.lookupSymbol(transform::TransformDialect::kTransformEntryPointSymbolName))
      return emitError(entry.getLoc(), "kforge-apply-tuned: the tuned library's schedule for ")
             << name.getValue() << " has no @" << transform::TransformDialect::kTransformEntryPointSymbolName;
    auto [it, inserted] = source.entries.try_emplace(name.getValue(), entry);
    if (!inserted) {
      InFlightDiagnostic diagnostic =
          emitError(entry.getLoc(), "kforge-apply-tuned: the tuned library holds two schedules for ")
          << name.getValue();
      diagnostic.attachNote(it->second.getLoc()) << "the first is here";
      return diagnostic;
    }
  }
  return source;
}

FailureOr<ModuleOp> ScheduleSource::find(func::FuncOp function, StringRef name, std::string &where) {
  if (library) {
    auto it = entries.find(name);
    if (it == entries.end())
      return ModuleOp();
    where = (libraryPath + " @" + name).str();
    return it->second;
  }
  SmallString<256> path(database);
  llvm::sys::path::append(path, target, name, "best.mlir");
  if (!llvm::sys::fs::exists(path))
    return ModuleOp();
  where = path.str().str();
  parsed = parseSourceFile<ModuleOp>(path, function.getContext());
  if (!parsed)
    return function.emitError("kforge-apply-tuned: cannot parse the schedule ") << path;
  return *parsed;
}

/// `function` scheduled by the transform library `schedule` (named `where` in messages), in a module of its
/// own (as the tuner's payload was): the scheduled function, or failure with an error.
FailureOr<OwningOpRef<ModuleOp>> scheduleAlone(func::FuncOp function, StringRef name, ModuleOp schedule,
                                               StringRef where) {
  // A database or a tuned library is a file anyone could have written: the same confinement as any untrusted
  // schedule.
  if (failed(kforge::checkScheduleConfined(schedule, kforge::ScheduleTrust::Untrusted)))
    return function.emitError("kforge-apply-tuned: the schedule ") << where << " is refused (above)";

  OwningOpRef<ModuleOp> alone = ModuleOp::create(function.getLoc());
  auto copy = cast<func::FuncOp>(function->clone());
  copy.setSymName(name);
  copy.setPublic();
  alone->getBody()->push_back(copy);
  if (failed(kforge::normalizeImporterPayload(*alone)))
    return function.emitError("kforge-apply-tuned: cannot normalize ") << name;
  // What -transform-preload-library + -transform-interpreter do, with the library held here: the preload
  // pass keeps it in the context, where a second function's library would clash with the first.
  transform::TransformOpInterface entry = transform::detail::findTransformEntryPoint(*alone, schedule);
  if (!entry)
    return function.emitError("kforge-apply-tuned: the schedule ") << where << " has no entry point";
  if (failed(transform::applyTransformNamedSequence(*alone, entry, schedule, transform::TransformOptions())))
    return function.emitError("kforge-apply-tuned: the schedule ")
           << where << " no longer applies to " << name << " (a stale database entry?)";
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
    FailureOr<ScheduleSource> source = ScheduleSource::open(module, database, library, target, target.hasValue());
    if (failed(source))
      return signalPassFailure();
    SmallVector<func::FuncOp> functions;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        functions.push_back(function);
    for (func::FuncOp function : functions) {
      std::string name = kforge::dispatchContentName(function);
      std::string where;
      FailureOr<ModuleOp> schedule = source->find(function, name, where);
      if (failed(schedule))
        return signalPassFailure();
      if (!*schedule)
        continue; // untuned: left as it is, for the default lowering
      // An argument the function only reads (never an op's destination) cannot be written by its kernel:
      // one-shot bufferization writes in place only into a destination's buffer.
      SmallVector<bool> readOnly;
      for (BlockArgument argument : function.getArguments())
        readOnly.push_back(llvm::none_of(argument.getUses(), [](OpOperand &use) {
          auto destination = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
          return !destination || destination.isDpsInit(&use);
        }));
      FailureOr<OwningOpRef<ModuleOp>> alone = scheduleAlone(function, name, *schedule, where);
      if (failed(alone))
        return signalPassFailure();
      auto scheduled = (**alone).lookupSymbol<func::FuncOp>(name);
      if (!scheduled) {
        function.emitError("kforge-apply-tuned: the schedule ") << where << " removed the function";
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
