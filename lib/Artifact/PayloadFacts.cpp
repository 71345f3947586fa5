//===- PayloadFacts.cpp - analyse a payload for the search (kforge-compile --facts-json) ===//

#include "kforge/Tune/PayloadFacts.h"
#include "kforge/Artifact/Artifact.h"
#include "kforge/Transforms/ChannelsLast.h"
#include "kforge/Transforms/ImplicitGemm.h"
#include "kforge/Transforms/Passes.h"
#include "kforge/Transforms/RowMoments.h"
#include "kforge/Transforms/WindowOps.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <functional>

using namespace mlir;

/// Both multiplicands contiguous along a K loop (each staged K-major).
static bool kMajor(const kforge::ImplicitGemm &gemm) {
  auto alongK = [&](int64_t loop) { return loop >= 0 && gemm.roles[loop] == kforge::GemmRole::K; };
  return alongK(gemm.aFastLoop) && alongK(gemm.bFastLoop);
}

/// What the channels_last action would copy (kforge/Transforms/ChannelsLast.h), and whether the convolution
/// reading the copies has its tiles copied in vectors: the rewrite applied to `op`'s copy in a copy of its module.
static void channelsLastFacts(linalg::LinalgOp op, kforge::tune::PayloadFacts &facts) {
  facts.channelsLastMultiplicands.clear();
  facts.channelsLastShapes.clear();
  facts.channelsLastVectorCopies = facts.channelsLastKMajor = false;
  std::string why;
  FailureOr<SmallVector<kforge::ChannelsLastOperand>> planned = kforge::planChannelsLast(op, why);
  auto module = op->getParentOfType<ModuleOp>();
  if (failed(planned) || !module)
    return;
  int64_t position = 0, index = -1;
  module.walk([&](Operation *each) {
    if (each == op.getOperation())
      index = position;
    ++position;
  });
  OwningOpRef<ModuleOp> copy = module.clone();
  Operation *copied = nullptr;
  position = 0;
  copy->walk([&](Operation *each) {
    if (position++ == index)
      copied = each;
  });
  IRRewriter rewriter(op->getContext());
  auto generic = dyn_cast_if_present<linalg::GenericOp>(copied);
  if (!generic) {
    auto named = dyn_cast_if_present<linalg::LinalgOp>(copied);
    rewriter.setInsertionPoint(copied);
    if (!named)
      return;
    FailureOr<linalg::GenericOp> generalized = linalg::generalizeNamedOp(rewriter, named);
    if (failed(generalized))
      return;
    generic = *generalized;
  }
  for (const kforge::ChannelsLastOperand &operand : *planned)
    if (failed(kforge::moveChannelsInnermost(rewriter, generic, operand.multiplicand, why)))
      return;
  FailureOr<kforge::ImplicitGemm> gemm = kforge::analyzeImplicitGemm(generic, why);
  if (failed(gemm))
    return;
  for (const kforge::ChannelsLastOperand &operand : *planned) {
    facts.channelsLastMultiplicands.push_back(operand.multiplicand);
    facts.channelsLastShapes.push_back(
        std::vector<int64_t>(operand.transposedShape.begin(), operand.transposedShape.end()));
  }
  facts.channelsLastVectorCopies = kforge::copiesInVectors(generic, *gemm, /*width=*/8);
  facts.channelsLastKMajor = kMajor(*gemm);
}

/// The implicit GEMM facts of `op` (a window op), when it reads as one.
static void implicitGemmFacts(linalg::LinalgOp op, kforge::tune::PayloadFacts &facts) {
  std::string why;
  FailureOr<kforge::ImplicitGemm> gemm = kforge::analyzeImplicitGemm(op, why);
  if (failed(gemm))
    return;
  facts.implicitGemm = gemm->rolesString();
  facts.implicitGemmReads = gemm->aIsRead && gemm->bIsRead;
  facts.implicitGemmK = 1;
  for (auto [range, role] : llvm::zip(op.getStaticLoopRanges(), gemm->roles))
    if (role == kforge::GemmRole::K)
      facts.implicitGemmK *= range;
  Type a = gemm->a.getType(), b = gemm->b.getType();
  if (a == b)
    facts.implicitGemmType = a.isF32() ? "f32" : a.isBF16() ? "bf16" : a.isF16() ? "f16" : "";
  Type a16 = kforge::withoutExtension(gemm->a).getType(), b16 = kforge::withoutExtension(gemm->b).getType();
  Type out = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (a16 == b16 && out.isF32() && (a16.isBF16() || a16.isF16()))
    facts.implicitGemmMmaType = a16.isBF16() ? "bf16" : "f16";
  facts.implicitGemmVectorCopies = kforge::copiesInVectors(op, *gemm, /*width=*/8);
  facts.implicitGemmKMajor = kMajor(*gemm);
  channelsLastFacts(op, facts);
}
using kforge::tune::PayloadFacts;

/// Bytes of one element; 0 for a type without a fixed size (getElementTypeBitWidth asserts on those).
static int64_t elementBytes(Type element) {
  if (auto complex = dyn_cast<ComplexType>(element))
    return 2 * elementBytes(complex.getElementType());
  if (element.isIntOrFloat())
    return (element.getIntOrFloatBitWidth() + 7) / 8;
  if (element.isIndex())
    return 8;
  return 0;
}

static int64_t typeBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return shaped.getNumElements() * elementBytes(shaped.getElementType());
}

FailureOr<PayloadFacts> kforge::analyzePayload(ModuleOp payload, StringRef requestedEntry) {
  // The facts describe the payload kforge-compile schedules: the normalized one.
  if (failed(normalizeImporterPayload(payload)))
    return failure();
  FailureOr<std::string> entry = findEntry(payload, requestedEntry);
  if (failed(entry))
    return failure();
  auto func = payload.lookupSymbol<func::FuncOp>(*entry);
  PayloadFacts facts;
  facts.entry = *entry;

  auto returnOp = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
  if (!returnOp || returnOp.getNumOperands() == 0)
    return func.emitError() << "the entry returns nothing: kforge-tune tunes the op producing its first result";
  // Through the reshapes of the result (views once bufferized): the schedule tiles the op they reshape.
  Value result = returnOp.getOperand(0);
  while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(result.getDefiningOp())) {
    result = result.getDefiningOp()->getOperand(0);
    ++facts.rootReshapes;
  }
  auto root = result.getDefiningOp<linalg::LinalgOp>();
  if (!root)
    return func.emitError() << "the entry's first result is not produced by a linalg op (or a reshape of one)";
  facts.rootOp = root->getName().getStringRef().str();
  facts.rootLoops = root.getNumLoops();
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
  if (kforge::isWindowOp(root))
    implicitGemmFacts(root, facts);
  // The root's own reduction: along its inputs' contiguous dimension when some input that walks a reduced
  // loop has one as its last (contiguous) dimension; across it (each output a column) when none does.
  if (root.getNumReductionLoops() > 0) {
    bool walked = false, along = false;
    for (OpOperand *input : root.getDpsInputOperands()) {
      AffineMap map = root.getMatchingIndexingMap(input);
      bool walks = false;
      for (unsigned loop = 0; loop < root.getNumLoops(); ++loop)
        walks |= root.getIteratorTypesArray()[loop] != utils::IteratorType::parallel && map.isFunctionOfDim(loop);
      if (!walks || map.getNumResults() == 0)
        continue;
      walked = true;
      auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
      along |= !last || root.getIteratorTypesArray()[last.getPosition()] != utils::IteratorType::parallel;
    }
    if (walked)
      facts.reductionInnermost = along ? 1 : 0;
  }

  // A root operand produced (through any chain of linalg ops) by a non-contraction reduction, and read
  // through a map that does not use parallel loop d, is read whole along d.
  std::function<bool(Value)> hasReductionProducer = [&](Value value) {
    if (auto reshape = value.getDefiningOp<tensor::CollapseShapeOp>())
      return hasReductionProducer(reshape.getSrc());
    if (auto reshape = value.getDefiningOp<tensor::ExpandShapeOp>())
      return hasReductionProducer(reshape.getSrc());
    auto producer = value.getDefiningOp<linalg::LinalgOp>();
    if (!producer)
      return false;
    if (producer.getNumReductionLoops() > 0 && !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(producer.getOperation()))
      return true;
    return llvm::any_of(producer->getOperands(), hasReductionProducer);
  };
  for (OpOperand *operand : root.getDpsInputOperands()) {
    if (!hasReductionProducer(operand->get()))
      continue;
    AffineMap map = root.getMatchingIndexingMap(operand);
    for (int64_t d = 0; d < static_cast<int64_t>(facts.parallelSizes.size()); ++d)
      if (!map.isFunctionOfDim(d) && !llvm::is_contained(facts.wholeDims, d))
        facts.wholeDims.push_back(d);
  }
  // A reduction's result read inside the root's body (a whole-tensor norm extracted to divide every element
  // by it) is read whole along every loop.
  bool extractsReduction = root->walk([&](tensor::ExtractOp extract) {
                                 return hasReductionProducer(extract.getTensor()) ? WalkResult::interrupt()
                                                                                  : WalkResult::advance();
                               }).wasInterrupted();
  if (extractsReduction)
    for (int64_t d = 0; d < static_cast<int64_t>(facts.parallelSizes.size()); ++d)
      if (!llvm::is_contained(facts.wholeDims, d))
        facts.wholeDims.push_back(d);
  llvm::sort(facts.wholeDims);

  func.walk([&](linalg::LinalgOp op) {
    ++facts.linalgOps;
    if (kforge::matchRowMoments(op))
      ++facts.rowMoments;
    if (op.getNumReductionLoops() > 0)
      ++facts.reductionOps;
    if (kforge::isWindowOp(op))
      ++facts.windowOps;
    if (op.getNumReductionLoops() > 0 && op.getNumDpsInits() > 1)
      ++facts.multiResultReductions;
    if (!op->getRegion(0).getOps<cf::AssertOp>().empty())
      ++facts.indexChecks;
    if (op.getNumReductionLoops() > 0 && !op->getRegion(0).getOps<linalg::IndexOp>().empty())
      ++facts.reductionsReadingIndex;
    if (op.getNumReductionLoops() > 0 && !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation())) {
      for (auto [range, iterator] : llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
        if (iterator == utils::IteratorType::reduction && !ShapedType::isDynamic(range))
          facts.reductionSize = std::max(facts.reductionSize, range);
    }
    if (facts.contractionOp.empty() && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation())) {
      facts.contractionOp = op->getName().getStringRef().str();
      SmallVector<int64_t> loops = op.getStaticLoopRanges();
      facts.contractionK = loops.back();
      Type lhs = getElementTypeOrSelf(op.getDpsInputs()[0].getType()),
           rhs = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
      if (lhs == rhs) {
        llvm::raw_string_ostream os(facts.contractionOperandType);
        lhs.print(os);
      }
      llvm::raw_string_ostream result(facts.contractionResultType);
      getElementTypeOrSelf(op.getDpsInits()[0].getType()).print(result);
      for (auto [range, iterator] : llvm::zip(loops, op.getIteratorTypesArray()))
        if (iterator == utils::IteratorType::parallel)
          facts.contractionSizes.push_back(range);
      // An operand is transposed when its last two results (rows, then the contiguous columns) are the loops in
      // the other order: A's (k, m) instead of (m, k), B's (n, k) instead of (k, n).
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      unsigned loopsCount = loops.size();
      auto lastTwo = [&](AffineMap map, unsigned row, unsigned col) {
        unsigned results = map.getNumResults();
        return results >= 2 && map.getResult(results - 2) == getAffineDimExpr(row, op.getContext()) &&
               map.getResult(results - 1) == getAffineDimExpr(col, op.getContext());
      };
      if (loopsCount >= 3) {
        unsigned m = loopsCount - 3, n = loopsCount - 2, k = loopsCount - 1;
        facts.contractionATransposed = lastTwo(maps[0], k, m);
        facts.contractionBTransposed = lastTwo(maps[1], n, k);
      }
      facts.contractionBFromArgument = isa<BlockArgument>(op.getDpsInputs()[1]);
      // Itself and the linalg ops its operands come from (through any chain).
      SetVector<Operation *> slice;
      SmallVector<Operation *> worklist{op.getOperation()};
      while (!worklist.empty()) {
        Operation *current = worklist.pop_back_val();
        if (!isa<linalg::LinalgOp>(current) || !slice.insert(current))
          continue;
        for (Value operand : current->getOperands())
          if (Operation *producer = operand.getDefiningOp())
            worklist.push_back(producer);
      }
      facts.contractionOps = static_cast<int64_t>(slice.size());
    }
  });
  // A convolution read by an elementwise root (its bias, its activation) over the same loops, the only reduction:
  // the implicit GEMM's loops are the root's.
  if (facts.implicitGemm.empty() && facts.windowOps == 1 && facts.reductionOps == 1 &&
      root.getNumReductionLoops() == 0 && root.getNumDpsInits() == 1 &&
      root.getMatchingIndexingMap(root.getDpsInitOperand(0)).isIdentity()) {
    func.walk([&](linalg::LinalgOp op) {
      if (!kforge::isWindowOp(op) || op.getNumDpsInits() != 1)
        return;
      AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (out.getNumResults() != facts.parallelSizes.size() ||
          out !=
              AffineMap::getMultiDimIdentityMap(out.getNumDims(), op.getContext()).getMajorSubMap(out.getNumResults()))
        return;
      if (!llvm::equal(ArrayRef<int64_t>(ranges).take_front(facts.parallelSizes.size()), facts.parallelSizes))
        return;
      implicitGemmFacts(op, facts);
    });
  }
  // A matmul-like contraction (with both M and N loops) or a window op: computed per output tile, fused or split
  // off (gemm + softmax), unlike a row reduction (a row's dot product is a contraction with neither).
  auto computedPerTile = [](linalg::LinalgOp op) {
    if (kforge::isWindowOp(op))
      return true;
    if (!linalg::isaContractionOpInterface(op))
      return false;
    FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
    return succeeded(dims) && !dims->m.empty() && !dims->n.empty();
  };
  // Whether `value` is computed (through any chain of linalg ops and reshapes) by an op with a reduction loop;
  // with `rowsOnly`, by one other than a matmul-like contraction or a window (which stop the chain).
  std::function<bool(Value, bool, int)> computedByReduction = [&](Value value, bool rowsOnly, int depth) {
    Operation *def = value.getDefiningOp();
    if (!def || depth > 64)
      return false;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      return computedByReduction(def->getOperand(0), rowsOnly, depth + 1);
    auto producer = dyn_cast<linalg::LinalgOp>(def);
    if (!producer || (rowsOnly && computedPerTile(producer)))
      return false;
    if (producer.getNumReductionLoops() > 0)
      return true;
    return llvm::any_of(producer->getOperands(),
                        [&](Value operand) { return computedByReduction(operand, rowsOnly, depth + 1); });
  };
  // Whether `op`'s body gathers (tensor.extract) from a row reduction's result (cross entropy's pick of each
  // row's target log-probability).
  auto gathersRowReduction = [&](Operation *op) {
    return op
        ->walk([&](tensor::ExtractOp extract) {
          return computedByReduction(extract.getTensor(), /*rowsOnly=*/true, 0) ? WalkResult::interrupt()
                                                                                : WalkResult::advance();
        })
        .wasInterrupted();
  };
  // The readers are matmul-like contractions: a K-long slice of their operand per tile. A pooling reading a
  // convolution (conv + max pool) reads a window of it per output, which fusion computes once or a little more
  // where windows overlap.
  func.walk([&](linalg::LinalgOp op) {
    if (!computedPerTile(op) || kforge::isWindowOp(op))
      return;
    if (llvm::any_of(op.getDpsInputs(), [&](Value input) { return computedByReduction(input, false, 0); }))
      ++facts.contractionsAfterReductions;
  });
  // Reductions over other reductions' results (see PayloadFacts::nestedReductions): `value`, read by the outer
  // op through `map` (its loops -> value's dims), traced back through elementwise producers (their result maps
  // permutations, so each step's map composes) to a reduction's result; nested when that result varies along
  // one of the outer op's reduction loops.
  std::function<bool(Value, AffineMap, ArrayRef<utils::IteratorType>, int)> variesAlongReduction =
      [&](Value value, AffineMap map, ArrayRef<utils::IteratorType> outer, int depth) {
        auto producer = value.getDefiningOp<linalg::LinalgOp>();
        if (!producer || depth > 32)
          return false;
        // A contraction's (or a convolution's) result is computed per output tile, fused or split off (gemm +
        // softmax): not a row reduction's.
        if (computedPerTile(producer))
          return false;
        if (producer.getNumReductionLoops() > 0)
          return llvm::any_of(llvm::seq<unsigned>(0, outer.size()), [&](unsigned d) {
            return outer[d] == utils::IteratorType::reduction &&
                   llvm::any_of(map.getResults(), [&](AffineExpr e) { return e.isFunctionOfDim(d); });
          });
        AffineMap resultMap = producer.getIndexingMapMatchingResult(cast<OpResult>(value));
        if (!resultMap.isPermutation())
          return false;
        AffineMap toProducerLoops = inversePermutation(resultMap).compose(map);
        // A gather in the producer's body (cross entropy's pick of each row's target log-probability) from a
        // reduction's result, at positions that follow the outer reduction loops.
        bool alongOuterReduction = llvm::any_of(llvm::seq<unsigned>(0, outer.size()), [&](unsigned d) {
          return outer[d] == utils::IteratorType::reduction &&
                 llvm::any_of(toProducerLoops.getResults(), [&](AffineExpr e) { return e.isFunctionOfDim(d); });
        });
        if (alongOuterReduction && gathersRowReduction(producer))
          return true;
        return llvm::any_of(producer.getDpsInputOperands(), [&](OpOperand *input) {
          return variesAlongReduction(input->get(), producer.getMatchingIndexingMap(input).compose(toProducerLoops),
                                      outer, depth + 1);
        });
      };
  func.walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 0 || computedPerTile(op))
      return;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    // A reduction whose body gathers from a reduction's result (cross entropy's mean picks each row's target
    // log-probability itself) reduces over it too.
    if (gathersRowReduction(op) || llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
          return variesAlongReduction(input->get(), op.getMatchingIndexingMap(input), iterators, 0);
        }))
      ++facts.nestedReductions;
  });
  // Convolutions (window ops that read as an implicit GEMM) whose result another window op (a pooling) reads,
  // directly or through elementwise ops and reshapes (see PayloadFacts::convolutionsBeforeWindows).
  std::function<bool(Value, int)> readByWindow = [&](Value value, int depth) {
    if (depth > 32)
      return false;
    for (Operation *user : value.getUsers()) {
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user) && readByWindow(user->getResult(0), depth + 1))
        return true;
      auto reader = dyn_cast<linalg::LinalgOp>(user);
      if (!reader || !llvm::is_contained(reader.getDpsInputs(), value))
        continue;
      if (kforge::isWindowOp(reader))
        return true;
      if (reader.getNumReductionLoops() == 0 &&
          llvm::any_of(reader->getResults(), [&](Value result) { return readByWindow(result, depth + 1); }))
        return true;
    }
    return false;
  };
  func.walk([&](linalg::LinalgOp op) {
    std::string why;
    if (op.getOperation() != root.getOperation() && kforge::isWindowOp(op) && op->getNumResults() == 1 &&
        succeeded(kforge::analyzeImplicitGemm(op, why)) && readByWindow(op->getResult(0), 0))
      ++facts.convolutionsBeforeWindows;
  });
  facts.rowIntermediates = 0;
  func.walk([&](linalg::LinalgOp op) {
    if (op.getOperation() == root.getOperation() || op.getNumReductionLoops() > 0 || facts.reductionSize == 0)
      return;
    for (Type type : op->getResultTypes())
      if (auto shaped = dyn_cast<ShapedType>(type);
          shaped && shaped.hasStaticShape() && shaped.getNumElements() >= facts.reductionSize) {
        ++facts.rowIntermediates;
        return;
      }
  });
  // Arguments read as rows by a reduction (directly or through a reshape): what each block of a row kernel
  // reads row by row.
  facts.rowInputs = 0;
  auto readByReduction = [](Value value) {
    return llvm::any_of(value.getUsers(), [](Operation *user) {
      auto op = dyn_cast<linalg::LinalgOp>(user);
      return op && op.getNumReductionLoops() > 0;
    });
  };
  for (BlockArgument argument : func.getArguments()) {
    auto shaped = dyn_cast<ShapedType>(argument.getType());
    if (facts.reductionSize <= 0 || !shaped || !shaped.hasStaticShape() || shaped.getRank() < 2)
      continue;
    bool rows = shaped.getShape().back() == facts.reductionSize && readByReduction(argument);
    for (Operation *user : argument.getUsers())
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
        rows |= collapse.getResultType().getShape().back() == facts.reductionSize && readByReduction(collapse);
    facts.rowInputs += rows;
  }
  facts.elementType = "unknown";
  if (auto shaped = dyn_cast<ShapedType>(returnOp.getOperand(0).getType())) {
    std::string text;
    llvm::raw_string_ostream os(text);
    shaped.getElementType().print(os);
    facts.elementType = text;
  }
  for (Type type : func.getArgumentTypes()) {
    facts.bytes += typeBytes(type);
    if (auto shaped = dyn_cast<ShapedType>(type); shaped && shaped.getElementType().isF32())
      facts.f32ArgumentBytes += typeBytes(type);
  }
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
