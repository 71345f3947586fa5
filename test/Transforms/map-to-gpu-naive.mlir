// RUN: kforge-opt %s -split-input-file -kforge-map-to-gpu-naive -verify-diagnostics | FileCheck %s

// Each op becomes its own kernel, one thread per point of its parallel space (4096 = 16 blocks x 256),
// reductions as a sequential loop in the thread.
// CHECK-LABEL: func.func @matmul_plus_one
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c16, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[OUT:.*]][
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c1
// CHECK: memref.load
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: memref.store
// CHECK-NOT: linalg.
func.func @matmul_plus_one(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%out : memref<64x64xf32>)
  linalg.matmul ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>)
  return
}

// -----

// Fewer points than a block: one block of exactly that many threads; linalg.index becomes the thread's index.
// CHECK-LABEL: func.func @iota
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}}) threads({{.*}}) in ({{.*}} = %c8,
// CHECK: arith.index_cast
func.func @iota(%out: memref<8xi32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%out : memref<8xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i32
    linalg.yield %v : i32
  }
  return
}

// -----

func.func @on_tensors(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{naive GPU mapping runs after bufferization (found an op on tensors)}}
  %c = linalg.copy ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %c : tensor<8xf32>
}
