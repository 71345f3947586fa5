//===- Pipelines.cpp - kforge lowering pipelines --------------------------===//
//
// The GPU pass order is the one recorded as working in shared/TOOLCHAIN.md, with
// kforge's own passes placed where each trap there has to be handled.
//
//===----------------------------------------------------------------------===//

#include "kforge/Pipelines/Pipelines.h"

#include "kforge/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mlir;

namespace {
/// Stands in for a pipeline whose options are invalid: reports why and fails, so the
/// mistake surfaces as a diagnostic and a non-zero exit instead of a confusing later error.
struct InvalidPipelineOptionPass : PassWrapper<InvalidPipelineOptionPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InvalidPipelineOptionPass)
  explicit InvalidPipelineOptionPass(std::string message) : message(std::move(message)) {}
  StringRef getArgument() const override { return "kforge-invalid-pipeline-option"; }
  void runOnOperation() override {
    getOperation().emitError() << message;
    signalPassFailure();
  }
  std::string message;
};
} // namespace

/// The explicit toolkit, else the usual environment variables, else /usr/local/cuda when present.
static std::string findCudaToolkit(StringRef explicitPath) {
  if (!explicitPath.empty())
    return explicitPath.str();
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(variable); value && !value->empty())
      return *value;
  if (llvm::sys::fs::is_directory("/usr/local/cuda"))
    return "/usr/local/cuda";
  return "";
}

/// Maps the user-facing format names to gpu-module-to-binary's; empty when invalid.
static std::string canonicalBinaryFormat(StringRef format) {
  if (format == "isa" || format == "ptx")
    return "isa";
  if (format == "bin" || format == "cubin")
    return "bin";
  if (format == "fatbin")
    return "fatbin";
  return "";
}

/// sm_NN or sm_NNa with NN >= 50 (what the NVPTX backend and ptxas 13 accept).
static bool isValidChip(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return false;
  chip.consume_back("a");
  unsigned number = 0;
  return !chip.getAsInteger(10, number) && number >= 50;
}

void kforge::buildBufferizeToDestinationPassingPipeline(OpPassManager &pm, bool cInterface) {
  if (cInterface)
    pm.addPass(createKforgeEmitCInterface());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createKforgeDropArgumentResults());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void kforge::buildLowerToNVVMPipeline(OpPassManager &pm, const LowerToNVVMOptions &options) {
  std::string format = canonicalBinaryFormat(options.format);
  if (format.empty()) {
    pm.addPass(std::make_unique<InvalidPipelineOptionPass>("kforge-lower-to-nvvm: unknown format '" + options.format +
                                                           "' (expected isa, bin or fatbin)"));
    return;
  }
  if (!isValidChip(options.chip)) {
    pm.addPass(std::make_unique<InvalidPipelineOptionPass>("kforge-lower-to-nvvm: chip '" + options.chip +
                                                           "' is not an NVIDIA target of the form sm_NN (NN >= 50)"));
    return;
  }
  if (options.optLevel < 0 || options.optLevel > 3) {
    pm.addPass(std::make_unique<InvalidPipelineOptionPass>("kforge-lower-to-nvvm: opt-level must be 0-3, not " +
                                                           std::to_string(options.optLevel)));
    return;
  }

  // Payload form: tensors -> buffers, results -> output arguments, then check it fits the GPU.
  buildBufferizeToDestinationPassingPipeline(pm, options.cInterface);
  pm.addPass(createKforgeWorkgroupAllocsToAttributions());
  pm.addPass(createKforgeVerifyGpuPayload());
  pm.addPass(createKforgeHostAllocsToDevice());
  pm.addPass(createKforgeKernelAllocsToAlloca());
  // A vector bufferization copied through per-thread scratch (a lane's several slices of a row) is written to
  // its target directly.
  pm.addPass(createKforgeForwardStoresToCopies());
  KforgeCopiesToLinalgOptions copies;
  copies.onlyInKernels = true;
  pm.addPass(createKforgeCopiesToLinalg(copies));

  // Device and host lowering.
  pm.addPass(createConvertLinalgToLoopsPass());
  // A lane's ragged slice of a row (q or q + 1 columns): q iterations with a constant bound, then one guarded.
  pm.addPass(createKforgePeelBoundedLoops());
  // A thread's scalar reduction loop keeps its accumulator in a register, not in memory per element.
  pm.addPass(createKforgePromoteLoopAccumulators());
  pm.addPass(createConvertNVGPUToNVVMPass());
  // Constants (e.g. the vector a fill stores) must be rematerialised in the kernel, not passed as arguments.
  pm.addPass(createKforgeSinkLaunchConstants()); // upstream's sinking, and through the casts nvgpu-to-nvvm left
  // Launch bounds a schedule asked for (transform.kforge.set_kernel_attributes) survive outlining by name.
  pm.addPass(createKforgePrepareKernelAttributes());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createKforgeApplyKernelAttributes());
  pm.addPass(createKforgeAlignKernelArguments());
  // Outlining copies shared-memory globals into the gpu.module but leaves the host copies, which then fail
  // to convert; they have no users left, so symbol-dce removes them.
  pm.addPass(createSymbolDCEPass());
  // A thread's strided slice of a row, read once into a vector: scalar loads at static positions (registers),
  // not upstream's loop over a stack copy.
  // A tile's fill of its output is written to C and read back as the accumulator: forwarded, so the
  // accumulators start in registers and C is written once.
  pm.nest<gpu::GPUModuleOp>().addPass(createKforgeForwardVectorTransfers());
  pm.addPass(createKforgeUnrollStridedTransfers());
  pm.addPass(createConvertVectorToSCFPass(VectorTransferToSCFOptions().enableFullUnroll().setTargetRank(1)));
  // Partial tiles' masked accesses: unmasked (vector loads and stores) in the tiles where the mask is all on.
  pm.nest<gpu::GPUModuleOp>().addPass(createKforgeVersionMaskedAccesses());
  // 128-bit accesses where the address provably allows them (A's rows of a gemm tile are offset by the K
  // loop's induction variable): while the loops are still scf.for, whose bounds and steps the proof reads.
  pm.nest<gpu::GPUModuleOp>().addPass(createKforgeProveVectorAlignment());
  // Index arithmetic the range analysis proves non-negative (thread and block ids, loop positions, their
  // delinearizations) in unsigned form: an affine floordiv or mod of a position is otherwise the signed
  // sequence (a sign fix-up around every division, 64-bit in the kernels' index math). While the loops are
  // still scf.for, whose bounds bound their induction variables.
  OpPassManager &kernelIndexMath = pm.nest<gpu::GPUModuleOp>();
  kernelIndexMath.addPass(createLowerAffinePass());
  kernelIndexMath.addPass(arith::createArithUnsignedWhenEquivalentPass());
  kernelIndexMath.addPass(arith::createArithIntRangeOpts());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  target.cmdOptions = options.ptxasOptions;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // Kernels that asked for streaming stores: ptxas -dscm=cs on their modules (the PTX cannot say it).
  KforgeStreamingStoresOptions streaming;
  streaming.assembled = format != "isa";
  pm.addPass(createKforgeStreamingStores(streaming));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  // convert-gpu-to-nvvm leaves vector transfers alone (gpu-to-llvm would convert them later, leaving dead casts
  // in the device module that break its translation), so lower them first.
  // Shared buffers default to the element's alignment, yet accesses to them get vectorized to 128 bits.
  device.addPass(createKforgeAlignSharedMemory());
  device.addPass(createKforgeLowerGpuMemorySpaces());
  device.addPass(createConvertVectorToLLVMPass());
  device.addPass(createKforgeLowerSubgroupReduce()); // float warp reductions: shuffles, before the NVVM lowering
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  // Kernels that asked for read-only inputs: their loads from buffers they only read become ld.global.nc.
  device.addPass(createKforgeInvariantInputLoads());
  // Kernels that asked for an L2 load policy: checked and recorded for kforge-gpu-module-to-binary.
  device.addPass(createKforgeL2LoadPolicy());
  device.addPass(createReconcileUnrealizedCastsPass());

  pm.addPass(createGpuToLLVMConversionPass());
  // Upstream's gpu-module-to-binary, with the kernels' L2 load policies applied to the optimised LLVM IR.
  KforgeGpuModuleToBinaryOptions binary;
  binary.compilationTarget = format;
  binary.toolkitPath = findCudaToolkit(options.toolkit);
  pm.addPass(createKforgeGpuModuleToBinary(binary));
  if (!options.dumpDir.empty()) {
    KforgeDumpGpuBinariesOptions dump;
    dump.dir = options.dumpDir;
    pm.addPass(createKforgeDumpGpuBinaries(dump));
  }
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createKforgeVerifyLoweredToLLVM());
}

void kforge::buildLowerToCPUPipeline(OpPassManager &pm, const LowerToCPUOptions &options) {
  buildBufferizeToDestinationPassingPipeline(pm, options.cInterface);
  pm.addPass(createKforgeVerifyCpuPayload());
  // GPU mapping attributes on scf.forall are ignored: the loops run sequentially.
  pm.addPass(createForallToForLoopPass());
  pm.addPass(createKforgeCopiesToLinalg());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertVectorToSCFPass(VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16 arithmetic and math in f32, each result rounded to bf16 (as PyTorch computes bf16 on the CPU; an add,
  // multiply or divide rounded twice, to f32 then to bf16, is still the correctly rounded bf16 result); then
  // the roundings as integer arithmetic. LLVM would otherwise round through __truncsfbf2, which a dlopen'ed
  // kernel library cannot resolve (a torch-mlir bf16 MLP's GELU did not load).
  pm.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(createKforgeExpandBF16());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (erf, tanh, ...) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createKforgeVerifyLoweredToLLVM());
}

namespace {
struct BufferizeOptions : PassPipelineOptions<BufferizeOptions> {
  Option<bool> cInterface{*this, "c-interface", llvm::cl::desc("Mark public functions with llvm.emit_c_interface"),
                          llvm::cl::init(false)};
};
} // namespace

void kforge::registerPipelines() {
  PassPipelineRegistration<LowerToNVVMOptions>(
      "kforge-lower-to-nvvm",
      "Lower a GPU-mapped payload (tensors or buffers) to host LLVM IR with an embedded PTX/cubin/fatbin",
      buildLowerToNVVMPipeline);
  PassPipelineRegistration<LowerToCPUOptions>("kforge-lower-to-cpu",
                                              "Lower a payload (tensors or buffers, not GPU-mapped) to host LLVM IR",
                                              buildLowerToCPUPipeline);
  PassPipelineRegistration<BufferizeOptions>(
      "kforge-bufferize",
      "Bufferize a payload and turn its results into caller-provided output arguments (the first stage of both "
      "lowering pipelines)",
      [](OpPassManager &pm, const BufferizeOptions &options) {
        buildBufferizeToDestinationPassingPipeline(pm, options.cInterface);
      });
}
