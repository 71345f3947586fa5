//===- kforge-opt.cpp - kforge's mlir-opt -----------------------------------===//
//
// All upstream dialects, passes and transform extensions plus kforge's passes and
// pipelines. Compiler pipelines and the lit tests call this tool.
//
//===----------------------------------------------------------------------===//

#include "kforge/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  kforge::registerAllPasses();
  mlir::DialectRegistry registry;
  kforge::registerAllDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "kforge optimizer driver\n", registry));
}
