//===- DumpGpuBinaries.cpp - write gpu.binary objects to files -----------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEDUMPGPUBINARIES
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

static StringRef getExtension(gpu::CompilationTarget format) {
  switch (format) {
  case gpu::CompilationTarget::Assembly:
    return "ptx";
  case gpu::CompilationTarget::Binary:
    return "cubin";
  case gpu::CompilationTarget::Fatbin:
    return "fatbin";
  case gpu::CompilationTarget::Offload:
    return "llvm.bc";
  }
  return "bin";
}

static std::string getChip(Attribute target) {
  if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target))
    return nvvm.getChip().str();
  return "target";
}

namespace {
struct DumpGpuBinariesPass : kforge::impl::KforgeDumpGpuBinariesBase<DumpGpuBinariesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      getOperation().emitError() << "cannot create directory '" << dir << "': " << ec.message();
      return signalPassFailure();
    }
    getOperation().walk([&](gpu::BinaryOp binary) {
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        llvm::SmallString<256> path(dir);
        llvm::sys::path::append(
            path,
            (binary.getSymName() + "." + getChip(object.getTarget()) + "." + getExtension(object.getFormat())).str());
        if (failed(writeFile(binary, path, object.getObject().getValue())))
          return signalPassFailure();
      }
    });
  }

  LogicalResult writeFile(gpu::BinaryOp binary, StringRef path, StringRef contents) {
    std::string message;
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &message);
    if (!file)
      return binary.emitError() << "cannot write '" << path << "': " << message;
    file->os() << contents;
    file->keep();
    return success();
  }
};
} // namespace
