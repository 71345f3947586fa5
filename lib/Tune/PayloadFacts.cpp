//===- PayloadFacts.cpp - what the search needs to know about a payload ---===//

#include "kforge/Tune/PayloadFacts.h"

#include "kforge/Artifact/Artifact.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

using namespace mlir;
using namespace kforge::tune;

llvm::json::Value kforge::tune::toJSON(const PayloadFacts &facts) {
  llvm::json::Array sizes;
  for (int64_t s : facts.parallelSizes)
    sizes.push_back(s);
  return llvm::json::Object{{"entry", facts.entry},
                            {"root_op", facts.rootOp},
                            {"parallel_sizes", std::move(sizes)},
                            {"contraction_op", facts.contractionOp},
                            {"contraction_k", facts.contractionK},
                            {"reduction_ops", facts.reductionOps},
                            {"linalg_ops", facts.linalgOps},
                            {"element_type", facts.elementType},
                            {"flops", facts.flops},
                            {"bytes", facts.bytes},
                            {"structural_hash", facts.structuralHash}};
}

bool kforge::tune::fromJSON(const llvm::json::Value &value, PayloadFacts &facts, llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  return o && o.map("entry", facts.entry) && o.map("root_op", facts.rootOp) &&
         o.map("parallel_sizes", facts.parallelSizes) && o.map("contraction_op", facts.contractionOp) &&
         o.map("contraction_k", facts.contractionK) && o.map("reduction_ops", facts.reductionOps) &&
         o.map("linalg_ops", facts.linalgOps) && o.map("element_type", facts.elementType) &&
         o.map("flops", facts.flops) && o.map("bytes", facts.bytes) &&
         o.map("structural_hash", facts.structuralHash);
}

static int64_t typeBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return shaped.getNumElements() * ((shaped.getElementTypeBitWidth() + 7) / 8);
}

FailureOr<PayloadFacts> kforge::tune::analyzePayload(ModuleOp payload, StringRef requestedEntry) {
  FailureOr<std::string> entry = findEntry(payload, requestedEntry);
  if (failed(entry))
    return failure();
  auto func = payload.lookupSymbol<func::FuncOp>(*entry);
  PayloadFacts facts;
  facts.entry = *entry;

  auto returnOp = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
  if (!returnOp || returnOp.getNumOperands() == 0)
    return func.emitError() << "the entry returns nothing: kforge-tune tunes the op producing its first result";
  auto root = returnOp.getOperand(0).getDefiningOp<linalg::LinalgOp>();
  if (!root)
    return func.emitError() << "the entry's first result is not produced by a linalg op";
  facts.rootOp = root->getName().getStringRef().str();
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  for (auto [range, iterator] : llvm::zip(ranges, root.getIteratorTypesArray())) {
    if (iterator != utils::IteratorType::parallel)
      break;
    if (ShapedType::isDynamic(range))
      return root->emitError() << "the root op has a dynamic loop size: kforge-tune needs static shapes";
    facts.parallelSizes.push_back(range);
  }
  if (facts.parallelSizes.empty())
    return root->emitError() << "the root op has no leading parallel loop to tile";

  func.walk([&](linalg::LinalgOp op) {
    ++facts.linalgOps;
    if (op.getNumReductionLoops() > 0)
      ++facts.reductionOps;
    if (facts.contractionOp.empty() && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation())) {
      facts.contractionOp = op->getName().getStringRef().str();
      SmallVector<int64_t> loops = op.getStaticLoopRanges();
      facts.contractionK = loops.back();
    }
  });
  facts.elementType = "unknown";
  if (auto shaped = dyn_cast<ShapedType>(returnOp.getOperand(0).getType())) {
    std::string text;
    llvm::raw_string_ostream os(text);
    shaped.getElementType().print(os);
    facts.elementType = text;
  }
  for (Type type : func.getArgumentTypes())
    facts.bytes += typeBytes(type);
  for (Type type : func.getResultTypes())
    facts.bytes += typeBytes(type);
  facts.flops = countFlops(payload, *entry);

  // Structural: the generic form without locations, so renaming values or moving lines changes nothing.
  std::string text;
  llvm::raw_string_ostream os(text);
  payload->print(os, OpPrintingFlags().printGenericOpForm().enableDebugInfo(false));
  facts.structuralHash = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)), /*LowerCase=*/true);
  return facts;
}
