// RUN: kforge-opt %s --split-input-file --kforge-lower-to-cpu -verify-diagnostics | FileCheck %s

// Importer form on tensors, with a loop nest a schedule produced (GPU mapping attributes are ignored on the
// CPU): everything reaches the LLVM dialect, the result is a trailing output argument.
// CHECK-LABEL: llvm.func @scaled_matmul(
// CHECK-NOT: llvm.call @malloc
// CHECK: llvm.func @_mlir_ciface_scaled_matmul(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: memref.
// CHECK-NOT: linalg.
#id = affine_map<(i, j) -> (i, j)>
func.func @scaled_matmul(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = scf.forall (%i) in (2) shared_outs(%acc = %init) -> (tensor<8x8xf32>) {
    %row = affine.apply affine_map<(d) -> (d * 4)>(%i)
    %a_tile = tensor.extract_slice %a[%row, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    %c_tile = tensor.extract_slice %acc[%row, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
    %r = linalg.matmul ins(%a_tile, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%c_tile : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %r into %acc[%row, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
    }
  } {mapping = [#gpu.block<x>]}
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @gpu_code(%a: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'gpu.launch' is GPU code and cannot run on the CPU path}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    memref.store %zero, %a[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}
