//===- Renderer.cpp - a schedule as transform-dialect text -----------------===//

#include "Renderer.h"

#include "ActionDefinition.h"

#include "llvm/ADT/STLExtras.h"

using namespace kforge::tune;
using llvm::StringRef;

std::string Renderer::render(const Schedule &schedule, std::vector<int> *actionLines) {
  const Action *twoKernels = kernelSplit(schedule);
  const ActionDefinition *splitDefinition = twoKernels ? &definitionOf(*twoKernels) : nullptr;
  bool separateProducers = splitDefinition && splitDefinition->marksContractionProducers();
  bool fuses = twoKernels || findSlot(schedule, "fuse", "block") != nullptr;
  line("// A kforge schedule, rendered by kforge-tune from the actions below (one fragment per action).");
  line("// Replay: kforge-opt PAYLOAD -transform-preload-library=transform-library-paths=THIS_FILE "
       "-transform-interpreter");
  line("//   actions: " + describe(schedule));
  line("module attributes {transform.with_named_sequence} {");
  if (fuses)
    renderProducerMatchers(separateProducers);
  if (twoKernels)
    renderKernelLoopMatcher();
  // stage on a convolution: the convolution (the op with a reduction loop) is marked for the implicit GEMM.
  bool implicitGemm = (findSlot(schedule, "stage") && stageIsImplicitGemm(facts)) ||
                      (splitDefinition && splitDefinition->needsImplicitGemmMark());
  if (implicitGemm)
    renderImplicitGemmMatcher();
  line("  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {");
  std::string funcName = implicitGemm ? "%unmarked" : "%func";
  if (separateProducers) {
    // Two sets of producers: the row kernel's, and the contraction's (its init's fill).
    line("    %entry = " + matchFunc("%module"));
    line("    %marked = transform.foreach_match in %entry @match_fusable_producer -> @mark_producer : " + kUnary);
    line("    " + funcName +
         " = transform.foreach_match in %marked @match_contraction_producer -> @mark_contraction_producer : " + kUnary);
  } else if (fuses) {
    // foreach_match consumes the function's handle and returns it.
    line("    %entry = " + matchFunc("%module"));
    line("    " + funcName +
         " = transform.foreach_match in %entry @match_fusable_producer -> @mark_producer : " + kUnary);
  } else {
    line("    " + funcName + " = " + matchFunc("%module"));
  }
  if (implicitGemm)
    line("    %func = transform.foreach_match in %unmarked @match_implicit_gemm -> @mark_implicit_gemm : " + kUnary);
  func = "%func";
  inner = "%func";
  std::vector<int> starts(schedule.size(), -1);
  if (splitDefinition)
    splitDefinition->renderBeforeRoot(*this, *twoKernels, starts);
  line("    %return = transform.structured.match ops{[\"func.return\"]} in %func : " + kUnary);
  line("    %root = " + rootProducer("%return"));
  root = "%root";
  if (findSlot(schedule, "reorder")) // reorder finds the root's innermost tile by this mark
    line("    transform.annotate %root \"kforge.root\" : !transform.any_op");
  if (splitDefinition)
    splitDefinition->renderFirstKernel(*this, *twoKernels, starts);
  Schedule scheduled = twoKernels ? withoutSplit(schedule) : schedule; // what the actions below act on
  for (auto [i, action] : llvm::enumerate(schedule)) {
    if ((twoKernels && i == 0) || definitionOf(action).renderPoint() != RenderPoint::Loops)
      continue; // after the finish: it needs the gpu.launch the mapping makes (mma: the bufferized warp tiles)
    starts[i] = nextLine();
    line("    // action " + std::to_string(i) + ": " + describe(action));
    renderLoopAction(twoKernels ? i - 1 : i, scheduled);
  }
  if (splitDefinition)
    splitDefinition->renderSecondKernel(*this, *twoKernels, starts);
  if (isBatchMatmul(facts) && (findSlot(schedule, "mma") || findSlot(schedule, "stage")))
    renderFoldUnitBatch();
  int finishStart = nextLine();
  line("    // finish (" + std::string(gpu ? "gpu" : "cpu") + "): bufferize" +
       (gpu ? ", map loops to the grid and the block" : "") + ", lower vectors");
  renderFinish(scheduled);
  // The fragments on the bufferized, mapped kernel, in schedule order (the canonical order puts the
  // rewrites of the matmul first, then the row kernels' ops, then the kernel attributes).
  for (auto [i, action] : llvm::enumerate(schedule)) {
    if (definitionOf(action).renderPoint() != RenderPoint::AfterFinish)
      continue;
    int start = nextLine();
    if (definitionOf(action).render(*this, i, schedule))
      starts[i] = start;
  }
  if (actionLines) {
    *actionLines = starts;
    actionLines->push_back(finishStart);
  }
  line("    transform.yield");
  line("  }");
  line("}");
  std::string text;
  for (const std::string &l : lines)
    text += l + "\n";
  return text;
}

void Renderer::renderLoopAction(size_t index, const Schedule &schedule) {
  definitionOf(schedule[index]).render(*this, index, schedule);
}

std::string Renderer::rootProducer(StringRef returnOp) {
  // Through the reshapes between the root and the return (payloadFacts.rootReshapes): each is the producer of
  // the next one's operand.
  std::string value = returnOp.str();
  for (int64_t i = 0; i < payloadFacts.rootReshapes; ++i) {
    std::string reshape = fresh("reshape");
    line("    " + reshape + " = transform.get_producer_of_operand " + value + "[0] : " + kUnary);
    value = reshape;
  }
  return "transform.get_producer_of_operand " + value + "[0] : " + kUnary;
}

std::string Renderer::matchFunc(StringRef in) {
  return "transform.structured.match ops{[\"func.func\"]} attributes{sym_name = \"" + facts.entry + "\"} in " +
         in.str() + " : " + kUnary;
}

std::string Renderer::matchLaunches() {
  std::string launches = fresh("launches");
  line("    " + launches + " = transform.structured.match ops{[\"gpu.launch\"]} in %bufferized : " + kUnary);
  return launches;
}

std::string Renderer::mapping(llvm::ArrayRef<int64_t> sizes, StringRef kind) {
  static const char *dims[] = {"x", "y", "z"};
  int tiled = static_cast<int>(llvm::count_if(sizes, [](int64_t s) { return s > 0; }));
  std::vector<std::string> items;
  for (int i = tiled - 1; i >= 0; --i)
    items.push_back("#gpu." + kind.str() + "<" + dims[i] + ">");
  return "[" + joinStrings(items, ", ") + "]";
}

void Renderer::renderImplicitGemmMatcher() {
  line("  // An op whose last loop is a reduction (the convolution): stage computes it as its implicit GEMM.");
  line("  transform.named_sequence @match_implicit_gemm(%op: !transform.any_op {transform.readonly}) "
       "-> !transform.any_op {");
  line("    transform.match.structured failures(propagate) %op : !transform.any_op {");
  line("    ^bb0(%structured: !transform.any_op):");
  line("      transform.match.structured.dim %structured[-1] {reduction} : !transform.any_op");
  line("      transform.match.structured.yield");
  line("    }");
  line("    transform.yield %op : !transform.any_op");
  line("  }");
  line("  transform.named_sequence @mark_implicit_gemm(%op: !transform.any_op {transform.readonly}) {");
  line("    transform.annotate %op \"kforge.implicit_gemm\" : !transform.any_op");
  line("    transform.yield");
  line("  }");
}

/// `split`: the contraction and its producers are not the row kernel's producers; they are marked apart.
void Renderer::renderProducerMatchers(bool split) {
  // Ops a fusion may take, and the users that make them producers. Without a split, any linalg op feeding
  // another: besides fills, contractions and generics, the convolutions and poolings normalization keeps named
  // (a pooling read by its divide, a fill or a pad's generic feeding a convolution).
  line("  // A linalg op whose first result feeds another linalg op: a producer that can be fused.");
  line("  transform.named_sequence @match_fusable_producer(%op: !transform.any_op {transform.readonly}) "
       "-> !transform.any_op {");
  if (split)
    line("    transform.match.operation_name %op [\"linalg.fill\", \"linalg.generic\"] : !transform.any_op");
  line("    %user = transform.match.structured failures(propagate) %op : " + kUnary + " {");
  line("    ^bb0(%structured: !transform.any_op):");
  line("      %u = transform.match.structured.result %structured[0] any : " + kUnary);
  line("      transform.match.structured.yield %u : !transform.any_op");
  line("    }");
  if (split) {
    line("    transform.match.operation_name %user [\"linalg.generic\"] : !transform.any_op");
  } else {
    line("    transform.match.structured failures(propagate) %user : !transform.any_op {");
    line("    ^bb0(%structured_user: !transform.any_op):");
    line("      transform.match.structured.yield");
    line("    }");
  }
  line("    transform.yield %op : !transform.any_op");
  line("  }");
  line("  transform.named_sequence @mark_producer(%op: !transform.any_op {transform.readonly}) {");
  line("    transform.annotate %op \"kforge.producer\" : !transform.any_op");
  line("    transform.yield");
  line("  }");
  if (split) {
    line("  // A producer of the contraction (its init's fill): fused into the contraction's kernel.");
    line("  transform.named_sequence @match_contraction_producer(%op: !transform.any_op {transform.readonly}) "
         "-> !transform.any_op {");
    line("    transform.match.operation_name %op [\"linalg.fill\", \"linalg.generic\"] : !transform.any_op");
    line("    %user = transform.match.structured failures(propagate) %op : " + kUnary + " {");
    line("    ^bb0(%structured: !transform.any_op):");
    line("      %u = transform.match.structured.result %structured[0] any : " + kUnary);
    line("      transform.match.structured.yield %u : !transform.any_op");
    line("    }");
    line("    transform.match.operation_name %user [\"linalg.matmul\", \"linalg.batch_matmul\"] : !transform.any_op");
    line("    transform.yield %op : !transform.any_op");
    line("  }");
    line("  transform.named_sequence @mark_contraction_producer(%op: !transform.any_op {transform.readonly}) {");
    line("    transform.annotate %op \"kforge.contraction_producer\" : !transform.any_op");
    line("    transform.yield");
    line("  }");
  }
  // Producers still outside the block loop (directly in the function) or outside the thread loop (directly
  // in the block loop) that have a use: what a second fusion pass takes. The parent is checked first, so
  // ops inside loops never reach the use check.
  for (StringRef level : {"block", "thread"}) {
    line("  transform.named_sequence @match_left_at_" + level.str() +
         "(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {");
    if (split)
      line("    transform.match.operation_name %op [\"linalg.fill\", \"linalg.matmul\", \"linalg.batch_matmul\", "
           "\"linalg.generic\"] : !transform.any_op");
    line("    %parent = transform.get_parent_op %op {nth_parent = 1} : " + kUnary);
    if (level == "block") {
      line("    transform.match.operation_name %parent [\"func.func\"] : !transform.any_op");
    } else {
      line("    transform.match.operation_name %parent [\"scf.forall\"] : !transform.any_op");
      line("    %grandparent = transform.get_parent_op %op {nth_parent = 2} : " + kUnary);
      line("    transform.match.operation_name %grandparent [\"func.func\"] : !transform.any_op");
    }
    line("    transform.match.structured failures(propagate) %op : !transform.any_op {");
    line("    ^bb0(%structured: !transform.any_op):");
    line("      %u = transform.match.structured.result %structured[0] any : " + kUnary);
    line("      transform.match.structured.yield");
    line("    }");
    line("    transform.yield %op : !transform.any_op");
    line("  }");
  }
}

/// An scf.forall directly in the function: a kernel's block loop (split: the contraction's, then the rows').
void Renderer::renderKernelLoopMatcher() {
  line("  transform.named_sequence @match_kernel_loop(%op: !transform.any_op {transform.readonly}) "
       "-> !transform.any_op {");
  line("    transform.match.operation_name %op [\"scf.forall\"] : !transform.any_op");
  line("    %parent = transform.get_parent_op %op {nth_parent = 1} : " + kUnary);
  line("    transform.match.operation_name %parent [\"func.func\"] : !transform.any_op");
  line("    transform.yield %op : !transform.any_op");
  line("  }");
}

/// split_k's second kernel: out[m, n] = sum over the parts of partial[p, m, n], plus the output's fill fused;
/// blocks of up to 16 x 128 outputs, 4 consecutive outputs per thread (vectorized: the parts are read as
/// 128-bit vectors).
void Renderer::renderPartialsSum() {
  auto largestDividing = [](int64_t extent, std::initializer_list<int64_t> sizes) {
    for (int64_t size : sizes)
      if (extent % size == 0)
        return size;
    return int64_t(1);
  };
  int64_t m = facts.parallelSizes[0], n = facts.parallelSizes[1];
  int64_t bm = largestDividing(m, {16, 8, 4, 2, 1}), bn = largestDividing(n, {128, 64, 32, 16, 8, 4, 2, 1});
  int64_t tn = bn % 4 == 0 ? 4 : 1;
  Action blockTile{"tile", "block", {0, bm, bn}}, blockFuse{"fuse", "block"}, threadTile{"tile", "thread", {0, 1, tn}},
      threadFuse{"fuse", "thread"}, vectorizeAction{"vectorize"};
  Schedule sum = {blockTile, blockFuse, threadTile, threadFuse, vectorizeAction};
  for (size_t i = 0; i < sum.size(); ++i)
    renderLoopAction(i, sum);
  kernelsAfter.push_back({bn / tn, bm, 1});
}

void Renderer::renderTransposeKernel(const std::string &transpose, llvm::ArrayRef<int64_t> shape) {
  auto largest = [](int64_t extent, int64_t multipleOf, int64_t atMost) {
    int64_t best = multipleOf;
    for (int64_t s = multipleOf; s <= std::min(extent, atMost); s += multipleOf)
      if (extent % s == 0)
        best = s;
    return best;
  };
  // Each thread moves up to 8 x 8 elements (a 16-byte vector along each side for 16-bit types); a block up to
  // 64 channels and 256 threads.
  int64_t inner = shape[shape.size() - 2], channels = shape.back();
  int64_t tc = largest(channels, 1, 8), ts = largest(inner, 1, 8);
  int64_t bc = largest(channels, tc, 64);
  int64_t bs = largest(inner, ts, 256 / (bc / tc) * ts);
  std::vector<int64_t> block = {bs, bc}, thread = {ts, tc};
  if (shape.size() == 3) {
    block.insert(block.begin(), 1);
    thread.insert(thread.begin(), 0);
  }
  std::string blockOp = fresh("transpose_block"), blockLoopName = fresh("transpose_block_loop");
  std::string threadOp = fresh("transpose_thread"), threadLoopName = fresh("transpose_thread_loop");
  std::string blockMap = gpu ? " (mapping = " + mapping(block, "block") + ")" : "";
  std::string threadMap = gpu ? " (mapping = " + mapping(thread, "thread") + ")" : "";
  line("    " + blockOp + ", " + blockLoopName + " = transform.structured.tile_using_forall " + transpose +
       " tile_sizes [" + joinInts(block, ", ") + "]" + blockMap + " : " + kPair);
  line("    " + threadOp + ", " + threadLoopName + " = transform.structured.tile_using_forall " + blockOp +
       " tile_sizes [" + joinInts(thread, ", ") + "]" + threadMap + " : " + kPair);
  // A thread's single channel (no divisor of the channels up to 8 but 1) would be a column of single elements,
  // on which MLIR 22's vector lowering does not finish: such a thread loops over its elements instead.
  if (tc > 1) {
    std::string ops = fresh("transpose_ops");
    line("    " + ops + " = transform.structured.match ops{[\"linalg.transpose\"]} in " + threadLoopName + " : " +
         kUnary);
    line("    transform.structured.vectorize " + ops + " : !transform.any_op");
    vectorized = true;
  }
  kernelsBefore.push_back({bc / tc, bs / ts, 1});
}

/// split's row kernel, on the root: one row per block over `lanes` lanes, producers fused, the row in
/// registers (vectorize) when it is at most 128 values per lane (a row sum's elementwise producer, e.g. a
/// sigmoid, would otherwise go through a stack buffer).
void Renderer::renderRowKernel(int64_t lanes) {
  bool rowSum = facts.parallelSizes.size() == 1;
  std::vector<int64_t> oneRow = rowSum ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 0};
  Schedule rows;
  Action blockTile{"tile", "block", oneRow}, blockFuse{"fuse", "block"}, threadTile{"tile", "thread", oneRow},
      threadFuse{"fuse", "thread"}, laneAction{"lanes"};
  laneAction.value = lanes;
  rows = {blockTile, blockFuse, threadTile, threadFuse, laneAction};
  if (rowWidth(facts) / lanes <= 128)
    rows.push_back(Action{"vectorize"});
  for (size_t i = 0; i < rows.size(); ++i)
    renderLoopAction(i, rows);
}

/// The ops named `opNames` (a quoted, comma-separated list; none: skip) in `in` in their generic form, then
/// every generic's unit dims folded away (rank-reducing slices).
void Renderer::renderFoldUnitDims(const std::string &opNames, const std::string &in) {
  if (!opNames.empty()) {
    std::string named = fresh("named_ops");
    line("    " + named + " = transform.structured.match ops{[" + opNames + "]} in " + in + " : " + kUnary);
    line("    " + fresh("generic") + " = transform.structured.generalize " + named + " : " + kUnary);
  }
  std::string unitFunc = fresh("func");
  line("    " + unitFunc + " = " + matchFunc("%module"));
  line("    transform.apply_patterns to " + unitFunc + " {");
  line("      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices");
  line("    } : !transform.any_op");
}

/// The named ops transform.structured.specialize may turn an elementwise linalg.generic into (MLIR 22).
static constexpr const char *kSpecializedElementwise =
    "\"linalg.copy\", \"linalg.exp\", \"linalg.log\", \"linalg.abs\", \"linalg.ceil\", \"linalg.floor\", "
    "\"linalg.negf\", \"linalg.reciprocal\", \"linalg.round\", \"linalg.sqrt\", \"linalg.rsqrt\", "
    "\"linalg.square\", \"linalg.tanh\", \"linalg.erf\", \"linalg.add\", \"linalg.sub\", \"linalg.mul\", "
    "\"linalg.div\", \"linalg.div_unsigned\", \"linalg.max\", \"linalg.min\", \"linalg.powf\", "
    "\"linalg.select\", \"linalg.transpose\", \"linalg.broadcast\", \"linalg.elementwise\", \"linalg.map\"";

/// `op` (on `%each`) applied to every linalg.generic of the block loop in turn, its failures suppressed (a
/// generic it does not apply to stays as it is).
void Renderer::renderOnEachGeneric(const std::string &op) {
  std::string generics = fresh("generics");
  line("    " + generics + " = transform.structured.match ops{[\"linalg.generic\"]} in " + blockLoop + " : " + kUnary);
  line("    transform.foreach " + generics + " : !transform.any_op {");
  line("    ^bb0(%one: !transform.any_op):");
  line("      transform.sequence %one : !transform.any_op failures(suppress) {");
  line("      ^bb1(%each: !transform.any_op):");
  line("        " + op);
  line("      }");
  line("    }");
}

/// A batch_matmul's block (one batch) as a matmul: the block's batch_matmul and fill in their generic form,
/// the unit batch folded away, then the matmul named by kforge.name_matmul (which keeps a transposed operand's
/// map: specialize drops it) and every other generic that specialize can name (the fill; failures suppressed),
/// and the elementwise ones among them made generic again, since the staged ops take their epilogue as
/// linalg.generic. They then see a linalg.matmul, its fill and its epilogue as for a gemm.
void Renderer::renderFoldUnitBatch() {
  line("    // the block's unit batch folded away: its batch_matmul becomes a matmul");
  renderFoldUnitDims("\"linalg.batch_matmul\", \"linalg.fill\"", blockLoop);
  renderOnEachGeneric("%matmul = transform.kforge.name_matmul %each : " + kUnary);
  renderOnEachGeneric("%named = transform.structured.specialize %each : " + kUnary);
  // specialize also names elementwise epilogues (a residual add becomes linalg.add); the staged ops take an
  // epilogue as linalg.generic, so those are generic again.
  std::string elementwise = fresh("elementwise");
  line("    " + elementwise + " = transform.structured.match ops{[" + kSpecializedElementwise + "]} in " + blockLoop +
       " : " + kUnary);
  line("    " + fresh("generic") + " = transform.structured.generalize " + elementwise + " : " + kUnary);
}

void Renderer::renderFinish(const Schedule &schedule) {
  // Producers fused into loops leave their originals dead: erase them while they are tensors (after
  // bufferization they write memory and stay, on the host), those that check indices (cf.assert) too.
  line("    %tfunc = " + matchFunc("%module"));
  line("    transform.apply_patterns to %tfunc {");
  line("      transform.apply_patterns.canonicalization");
  line("      transform.apply_patterns.kforge.erase_unused_checks");
  line("    } : !transform.any_op");
  line("    transform.apply_cse to %tfunc : !transform.any_op");
  line("    %bufferized = transform.bufferization.one_shot_bufferize %module");
  line("        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32} : " + kUnary);
  line("    %bfunc = " + matchFunc("%bufferized"));
  line("    transform.apply_patterns to %bfunc {");
  line("      transform.apply_patterns.canonicalization");
  // split_k's partial matmul reads its operands through memref.expand_shape views of the arguments, on
  // which upstream's alias folding does not terminate (seen with MLIR 22); the lowering folds them later.
  if (!splitKSchedule)
    line("      transform.apply_patterns.memref.fold_memref_alias_ops");
  line("    } : !transform.any_op");
  line("    transform.apply_cse to %bfunc : !transform.any_op");
  if (gpu && (!kernelsBefore.empty() || !kernelsAfter.empty())) {
    // Several kernels, in program order: those a split renders with fixed schedules before the one the
    // schedule's actions size (split_rows' partials, channels_last's transposes), that one, then those after
    // it (split's rows, split_k's sum).
    std::vector<std::vector<int64_t>> kernels = kernelsBefore;
    kernels.push_back(blockDims(schedule, facts));
    kernels.insert(kernels.end(), kernelsAfter.begin(), kernelsAfter.end());
    std::vector<std::string> handles, types;
    for (size_t i = 0; i < kernels.size(); ++i) {
      handles.push_back("%kernel" + std::to_string(i));
      types.push_back("!transform.any_op");
    }
    line("    %kernel_loops = transform.collect_matching @match_kernel_loop in %bfunc : " + kUnary);
    line("    " + joinStrings(handles, ", ") + " = transform.split_handle %kernel_loops : (!transform.any_op) -> (" +
         joinStrings(types, ", ") + ")");
    for (size_t i = 0; i < kernels.size(); ++i) {
      std::string launch = "%launch" + std::to_string(i);
      line("    " + launch + " = transform.gpu.map_forall_to_blocks " + handles[i] +
           " generate_gpu_launch : " + kUnary);
      line("    transform.gpu.map_nested_forall_to_threads " + launch + " block_dims = [" + joinInts(kernels[i], ", ") +
           "] : " + kUnary);
    }
    line("    %mfunc = " + matchFunc("%bufferized"));
    line("    transform.apply_patterns to %mfunc {");
    if (!splitKSchedule)
      line("      transform.apply_patterns.memref.fold_memref_alias_ops");
    line("      transform.apply_patterns.canonicalization");
    line("    } : !transform.any_op");
  } else if (gpu) {
    std::vector<int64_t> dims = blockDims(schedule, facts);
    line("    %launch = transform.gpu.map_forall_to_blocks %bfunc generate_gpu_launch : " + kUnary);
    line("    transform.gpu.map_nested_forall_to_threads %launch block_dims = [" + joinInts(dims, ", ") +
         "] : " + kUnary);
    line("    %mfunc = " + matchFunc("%bufferized"));
    line("    transform.apply_patterns to %mfunc {");
    line("      transform.apply_patterns.memref.fold_memref_alias_ops");
    line("      transform.apply_patterns.canonicalization");
    line("    } : !transform.any_op");
  }
  if (!vectorized)
    return;
  line("    %vfunc = " + matchFunc("%bufferized"));
  line("    %hoisted = transform.structured.hoist_redundant_vector_transfers %vfunc : " + kUnary);
  line("    transform.apply_patterns to %hoisted {");
  line("      transform.apply_patterns.vector.lower_contraction lowering_strategy = \"outerproduct\"");
  line("      transform.apply_patterns.vector.lower_outerproduct");
  line("      transform.apply_patterns.vector.transfer_permutation_patterns");
  // Masked transfers (partial tiles): the mask moves into the transfer, so that each unrolled 1-D transfer
  // carries its own (a vector.mask region holds one op, which the unrolling breaks).
  if (masked) {
    line("      transform.apply_patterns.vector.lower_masked_transfers");
    line("      transform.apply_patterns.vector.lower_masks");
  }
  line("      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1");
  line("      transform.apply_patterns.vector.lower_broadcast");
  line("      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = \"innerreduction\"");
  line("      transform.apply_patterns.vector.lower_transpose");
  line("      transform.apply_patterns.vector.lower_shape_cast");
  line("      transform.apply_patterns.canonicalization");
  line("    } : !transform.any_op");
  line("    transform.apply_cse to %hoisted : !transform.any_op");
}
