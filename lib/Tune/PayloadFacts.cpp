//===- PayloadFacts.cpp - payload facts as JSON ----------------------------===//

#include "kforge/Tune/PayloadFacts.h"

using namespace kforge::tune;

llvm::json::Value kforge::tune::toJSON(const PayloadFacts &facts) {
  llvm::json::Array sizes;
  for (int64_t s : facts.parallelSizes)
    sizes.push_back(s);
  llvm::json::Array channelsLastShapes;
  for (const std::vector<int64_t> &shape : facts.channelsLastShapes)
    channelsLastShapes.push_back(llvm::json::Array(shape));
  return llvm::json::Object{{"entry", facts.entry},
                            {"root_op", facts.rootOp},
                            {"root_loops", facts.rootLoops},
                            {"root_reshapes", facts.rootReshapes},
                            {"parallel_sizes", std::move(sizes)},
                            {"contraction_op", facts.contractionOp},
                            {"contraction_k", facts.contractionK},
                            {"contraction_sizes", llvm::json::Array(facts.contractionSizes)},
                            {"contraction_ops", facts.contractionOps},
                            {"contraction_operand_type", facts.contractionOperandType},
                            {"contraction_result_type", facts.contractionResultType},
                            {"contraction_a_transposed", facts.contractionATransposed},
                            {"contraction_b_transposed", facts.contractionBTransposed},
                            {"contraction_b_from_argument", facts.contractionBFromArgument},
                            {"allow_tf32", facts.allowTf32},
                            {"reduction_ops", facts.reductionOps},
                            {"reduction_size", facts.reductionSize},
                            {"linalg_ops", facts.linalgOps},
                            {"whole_dims", llvm::json::Array(facts.wholeDims)},
                            {"row_moments", facts.rowMoments},
                            {"reduction_innermost", facts.reductionInnermost},
                            {"row_intermediates", facts.rowIntermediates},
                            {"window_ops", facts.windowOps},
                            {"implicit_gemm", facts.implicitGemm},
                            {"implicit_gemm_type", facts.implicitGemmType},
                            {"implicit_gemm_mma_type", facts.implicitGemmMmaType},
                            {"implicit_gemm_vector_copies", facts.implicitGemmVectorCopies},
                            {"implicit_gemm_k", facts.implicitGemmK},
                            {"implicit_gemm_reads", facts.implicitGemmReads},
                            {"channels_last_multiplicands", llvm::json::Array(facts.channelsLastMultiplicands)},
                            {"channels_last_shapes", std::move(channelsLastShapes)},
                            {"channels_last_vector_copies", facts.channelsLastVectorCopies},
                            {"implicit_gemm_k_major", facts.implicitGemmKMajor},
                            {"channels_last_k_major", facts.channelsLastKMajor},
                            {"multi_result_reductions", facts.multiResultReductions},
                            {"index_checks", facts.indexChecks},
                            {"reductions_reading_index", facts.reductionsReadingIndex},
                            {"row_inputs", facts.rowInputs},
                            {"contractions_after_reductions", facts.contractionsAfterReductions},
                            {"nested_reductions", facts.nestedReductions},
                            {"convolutions_before_windows", facts.convolutionsBeforeWindows},
                            {"element_type", facts.elementType},
                            {"flops", facts.flops},
                            {"bytes", facts.bytes},
                            {"f32_argument_bytes", facts.f32ArgumentBytes},
                            {"structural_hash", facts.structuralHash}};
}

bool kforge::tune::fromJSON(const llvm::json::Value &value, PayloadFacts &facts, llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  return o && o.map("entry", facts.entry) && o.map("root_op", facts.rootOp) &&
         o.mapOptional("root_loops", facts.rootLoops) && o.mapOptional("root_reshapes", facts.rootReshapes) &&
         o.map("parallel_sizes", facts.parallelSizes) && o.map("contraction_op", facts.contractionOp) &&
         o.map("contraction_k", facts.contractionK) && o.mapOptional("contraction_sizes", facts.contractionSizes) &&
         o.mapOptional("contraction_ops", facts.contractionOps) &&
         o.mapOptional("contraction_operand_type", facts.contractionOperandType) &&
         o.mapOptional("contraction_result_type", facts.contractionResultType) &&
         o.mapOptional("contraction_a_transposed", facts.contractionATransposed) &&
         o.mapOptional("contraction_b_transposed", facts.contractionBTransposed) &&
         o.mapOptional("contraction_b_from_argument", facts.contractionBFromArgument) &&
         o.mapOptional("allow_tf32", facts.allowTf32) && o.map("reduction_ops", facts.reductionOps) &&
         o.map("reduction_size", facts.reductionSize) && o.map("linalg_ops", facts.linalgOps) &&
         o.mapOptional("whole_dims", facts.wholeDims) && o.mapOptional("row_moments", facts.rowMoments) &&
         o.mapOptional("reduction_innermost", facts.reductionInnermost) &&
         o.mapOptional("row_intermediates", facts.rowIntermediates) && o.mapOptional("window_ops", facts.windowOps) &&
         o.mapOptional("implicit_gemm", facts.implicitGemm) &&
         o.mapOptional("implicit_gemm_type", facts.implicitGemmType) &&
         o.mapOptional("implicit_gemm_mma_type", facts.implicitGemmMmaType) &&
         o.mapOptional("implicit_gemm_vector_copies", facts.implicitGemmVectorCopies) &&
         o.mapOptional("implicit_gemm_k", facts.implicitGemmK) &&
         o.mapOptional("implicit_gemm_reads", facts.implicitGemmReads) &&
         o.mapOptional("channels_last_multiplicands", facts.channelsLastMultiplicands) &&
         o.mapOptional("channels_last_shapes", facts.channelsLastShapes) &&
         o.mapOptional("channels_last_vector_copies", facts.channelsLastVectorCopies) &&
         o.mapOptional("implicit_gemm_k_major", facts.implicitGemmKMajor) &&
         o.mapOptional("channels_last_k_major", facts.channelsLastKMajor) &&
         o.mapOptional("multi_result_reductions", facts.multiResultReductions) &&
         o.mapOptional("index_checks", facts.indexChecks) &&
         o.mapOptional("reductions_reading_index", facts.reductionsReadingIndex) &&
         o.mapOptional("row_inputs", facts.rowInputs) &&
         o.mapOptional("contractions_after_reductions", facts.contractionsAfterReductions) &&
         o.mapOptional("nested_reductions", facts.nestedReductions) &&
         o.mapOptional("convolutions_before_windows", facts.convolutionsBeforeWindows) &&
         o.map("element_type", facts.elementType) && o.map("flops", facts.flops) && o.map("bytes", facts.bytes) &&
         o.mapOptional("f32_argument_bytes", facts.f32ArgumentBytes) && o.map("structural_hash", facts.structuralHash);
}

