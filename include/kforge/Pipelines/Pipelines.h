//===- Pipelines.h - kforge lowering pipelines ------------------*- C++ -*-===//
//
// Two pipelines take a scheduled payload (linalg on tensors or on buffers, in the
// form importers produce or destination-passing) to the LLVM dialect:
//   kforge-lower-to-nvvm  host code + an embedded GPU binary (PTX, cubin or fatbin)
//   kforge-lower-to-cpu   host code only, for running schedules without a GPU
// Both make results caller-provided output arguments and mark public functions
// with llvm.emit_c_interface, which is the ABI the runner calls.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_PIPELINES_PIPELINES_H
#define KFORGE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace kforge {

/// Options of kforge-lower-to-nvvm.
struct LowerToNVVMOptions : mlir::PassPipelineOptions<LowerToNVVMOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target GPU architecture (sm_NN or sm_NNa)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features", llvm::cl::desc("PTX features, e.g. +ptx80"),
                               llvm::cl::init("+ptx80")};
  Option<int> optLevel{*this, "opt-level", llvm::cl::desc("LLVM optimisation level of the device code (0-3)"),
                       llvm::cl::init(3)};
  Option<std::string> format{*this, "format",
                             llvm::cl::desc("GPU binary format: isa (PTX text), bin (cubin) or fatbin"),
                             llvm::cl::init("fatbin")};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("CUDA toolkit path (ptxas, libdevice); default: $CUDA_HOME, "
                                             "$CUDA_PATH, $CUDA_ROOT, then /usr/local/cuda"),
                              llvm::cl::init("")};
  Option<std::string> ptxasOptions{*this, "ptxas-options", llvm::cl::desc("Extra ptxas command-line options, e.g. -v"),
                                   llvm::cl::init("")};
  Option<std::string> dumpDir{*this, "dump-dir",
                              llvm::cl::desc("Write each GPU binary (.ptx/.cubin/.fatbin) into this directory"),
                              llvm::cl::init("")};
  Option<bool> cInterface{*this, "c-interface", llvm::cl::desc("Emit _mlir_ciface_ wrappers for public functions"),
                          llvm::cl::init(true)};
};

/// Options of kforge-lower-to-cpu.
struct LowerToCPUOptions : mlir::PassPipelineOptions<LowerToCPUOptions> {
  Option<bool> cInterface{*this, "c-interface", llvm::cl::desc("Emit _mlir_ciface_ wrappers for public functions"),
                          llvm::cl::init(true)};
};

/// Bufferizes (when still on tensors) and turns returned results into output arguments.
void buildBufferizeToDestinationPassingPipeline(mlir::OpPassManager &pm, bool cInterface);

/// Fills `pm` with the passes of kforge-lower-to-nvvm.
void buildLowerToNVVMPipeline(mlir::OpPassManager &pm, const LowerToNVVMOptions &options);

/// Fills `pm` with the passes of kforge-lower-to-cpu.
void buildLowerToCPUPipeline(mlir::OpPassManager &pm, const LowerToCPUOptions &options);

/// Registers kforge-lower-to-nvvm, kforge-lower-to-cpu and kforge-bufferize.
void registerPipelines();

} // namespace kforge

#endif // KFORGE_PIPELINES_PIPELINES_H
