//===- ImplicitGemm.h - stage and mma on a convolution's implicit GEMM -*- C++ -*-===//
//
// The checks and fragments of stage (fp32: transform.kforge.implicit_gemm_to_simt_staged) and of mma with stage
// (bf16/f16: transform.kforge.implicit_gemm_to_mma_sync) on a payload whose root is, or reads, a convolution
// (PayloadFacts::implicitGemm). TensorCores.cpp's actions call them. Private to lib/Tune/actions.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TUNE_ACTIONS_IMPLICITGEMM_H
#define KFORGE_LIB_TUNE_ACTIONS_IMPLICITGEMM_H

#include "../ActionDefinition.h"

namespace kforge::tune {

/// stage without mma on a convolution root: the fp32 SIMT implicit GEMM.
void checkImplicitGemmStage(const Schedule &schedule, const PayloadFacts &facts, int index, const ProblemSink &problem);
void renderImplicitGemmStage(Renderer &r, size_t index, const Schedule &schedule);

/// mma (at `index`) on a convolution root: its tensor-core implicit GEMM, staged (stage's block_k) with two
/// stages; each thread tile is a warp's.
void checkImplicitGemmMma(const Schedule &schedule, const PayloadFacts &facts, int index, const ProblemSink &problem);
void renderImplicitGemmMma(Renderer &r, size_t index, const Schedule &schedule);

} // namespace kforge::tune

#endif // KFORGE_LIB_TUNE_ACTIONS_IMPLICITGEMM_H
