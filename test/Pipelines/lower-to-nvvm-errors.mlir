// RUN: kforge-opt %s --kforge-lower-to-nvvm -verify-diagnostics
// RUN: not kforge-opt %s --kforge-lower-to-nvvm="format=elf" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not kforge-opt %s --kforge-lower-to-nvvm="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not kforge-opt %s --kforge-lower-to-nvvm="opt-level=7" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not kforge-opt %s --kforge-lower-to-nvvm="no-such-option=1" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// FORMAT: error: kforge-lower-to-nvvm: unknown format 'elf' (expected isa, bin or fatbin)
// CHIP: error: kforge-lower-to-nvvm: chip 'gfx90a' is not an NVIDIA target of the form sm_NN (NN >= 50)
// OPT: error: kforge-lower-to-nvvm: opt-level must be 0-3, not 7
// UNKNOWN: no-such-option

// A payload no schedule has mapped to the GPU: the pipeline refuses it rather than running it on the host.
func.func @unmapped(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  // expected-error @+1 {{'linalg.fill' reads or writes memory on the host, but on the GPU path every buffer is device memory}}
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-error @+1 {{'linalg.matmul' reads or writes memory on the host}}
  %c = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
