//===- L2LoadPolicy.cpp - loads with an L2 cache policy, in LLVM IR -------===//
//
// See L2LoadPolicy.h. NVPTX has no load with a cache-policy operand, so the loads are written as inline PTX;
// that happens on the optimised LLVM IR, because NVPTX combines the scalar loads MLIR's lowering leaves (a lane's
// four consecutive floats) into 128-bit loads only during code generation, and never through inline PTX: the
// load-store vectoriser is run here first for the same reason.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/L2LoadPolicy.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/Vectorize/LoadStoreVectorizer.h"

#include <optional>
#include <string>

using namespace llvm;

namespace {
/// A load as 16-bit or 32-bit registers (one, two or four).
struct PolicyLoadShape {
  unsigned words = 0;
  unsigned wordBits = 0;
};
} // namespace

/// How `load` reads its bits with a cache-policy operand, or nothing when its type or alignment has no such
/// PTX load: 8-bit or pointer values, more than 128 bits, a vector not aligned to its size.
static std::optional<PolicyLoadShape> policyLoadShape(LoadInst &load, const DataLayout &layout) {
  Type *type = load.getType();
  Type *element = type->getScalarType();
  if (!element->isIntegerTy() && !element->isFloatingPointTy())
    return std::nullopt;
  if (type->isVectorTy() && !isa<FixedVectorType>(type))
    return std::nullopt;
  uint64_t bits = layout.getTypeSizeInBits(type).getFixedValue();
  if (bits != 16 && bits != 32 && bits != 64 && bits != 128)
    return std::nullopt;
  if (load.getAlign().value() < bits / 8)
    return std::nullopt;
  if (bits == 16)
    return PolicyLoadShape{1, 16};
  return PolicyLoadShape{unsigned(bits / 32), 32};
}

static void rewriteWithPolicy(LoadInst &load, PolicyLoadShape shape, Value *policy) {
  IRBuilder<> b(&load);
  LLVMContext &context = load.getContext();
  Value *address = load.getPointerOperand();
  if (address->getType()->getPointerAddressSpace() != 1)
    address = b.CreateAddrSpaceCast(address, PointerType::get(context, 1));

  Type *word = b.getIntNTy(shape.wordBits);
  std::string registers, constraints;
  for (unsigned i = 0; i < shape.words; ++i) {
    registers += (i ? ", $" : "$") + std::to_string(i);
    constraints += shape.wordBits == 16 ? "=h," : "=r,";
  }
  if (shape.words > 1)
    registers = "{" + registers + "}";
  std::string text = std::string("ld.global") + (load.hasMetadata(LLVMContext::MD_invariant_load) ? ".nc" : "") +
                     ".L2::cache_hint" + (shape.words > 1 ? ".v" + std::to_string(shape.words) : "") + ".b" +
                     std::to_string(shape.wordBits) + " " + registers + ", [$" + std::to_string(shape.words) + "], $" +
                     std::to_string(shape.words + 1) + ";";
  constraints += "l,l";
  Type *result = shape.words == 1 ? word : StructType::get(context, SmallVector<Type *>(shape.words, word));
  auto *type = FunctionType::get(result, {address->getType(), policy->getType()}, /*isVarArg=*/false);
  // With side effects: LLVM keeps the loads in order with the kernel's stores (its buffers may be written too).
  Value *bits = b.CreateCall(InlineAsm::get(type, text, constraints, /*hasSideEffects=*/true), {address, policy});
  if (shape.words > 1) {
    Value *vector = PoisonValue::get(FixedVectorType::get(word, shape.words));
    for (unsigned i = 0; i < shape.words; ++i)
      vector = b.CreateInsertElement(vector, b.CreateExtractValue(bits, i), b.getInt32(i));
    bits = vector;
  }
  Value *loaded = bits->getType() == load.getType() ? bits : b.CreateBitCast(bits, load.getType());
  loaded->takeName(&load);
  load.replaceAllUsesWith(loaded);
  load.eraseFromParent();
}

static unsigned applyToFunction(Function &function, StringRef policy) {
  {
    // Each function on its own, with the analyses the vectoriser asks for (the target's cost model is not
    // needed: it combines only what is aligned to the combined size).
    PassBuilder builder;
    LoopAnalysisManager loops;
    FunctionAnalysisManager functions;
    CGSCCAnalysisManager graphs;
    ModuleAnalysisManager modules;
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(graphs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, graphs, modules);
    LoadStoreVectorizerPass().run(function, functions);
  }
  const DataLayout &layout = function.getParent()->getDataLayout();
  SmallVector<std::pair<LoadInst *, PolicyLoadShape>> loads;
  for (Instruction &instruction : instructions(function)) {
    auto *load = dyn_cast<LoadInst>(&instruction);
    if (!load || !load->isSimple())
      continue; // volatile or atomic: the program asked for this very access
    unsigned space = load->getPointerAddressSpace();
    if (space != 0 && space != 1)
      continue; // shared, local, constant memory
    if (!isa<Argument>(getUnderlyingObject(load->getPointerOperand(), /*MaxLookup=*/0)))
      continue; // not one of the kernel's buffers
    if (std::optional<PolicyLoadShape> shape = policyLoadShape(*load, layout))
      loads.push_back({load, *shape});
  }
  if (loads.empty())
    return 0;
  IRBuilder<> b(&*function.getEntryBlock().getFirstInsertionPt());
  auto *makeType = FunctionType::get(b.getInt64Ty(), /*isVarArg=*/false);
  Value *policyValue = b.CreateCall(
      InlineAsm::get(makeType, kforge::createPolicyPtx(policy), "=l", /*hasSideEffects=*/false), {}, "l2_policy");
  for (auto [load, shape] : loads)
    rewriteWithPolicy(*load, shape, policyValue);
  return loads.size();
}

unsigned kforge::applyL2LoadPolicies(Module &module) {
  unsigned rewritten = 0;
  for (Function &function : module) {
    if (!function.hasFnAttribute(kL2LoadPolicyFunctionAttribute))
      continue;
    std::string policy = function.getFnAttribute(kL2LoadPolicyFunctionAttribute).getValueAsString().str();
    function.removeFnAttr(kL2LoadPolicyFunctionAttribute);
    if (!function.isDeclaration())
      rewritten += applyToFunction(function, policy);
  }
  return rewritten;
}
