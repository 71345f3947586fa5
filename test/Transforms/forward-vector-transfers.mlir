// RUN: kforge-opt %s -pass-pipeline='builtin.module(gpu.module(kforge-forward-vector-transfers))' | FileCheck %s

// A fused fill's zeros written to C and read back as the accumulator: the read takes the zeros, and the write
// is dropped because the result overwrites it before anything reads C. A's reads stay.
// CHECK-LABEL: gpu.func @accumulate
// CHECK-NOT: vector.transfer_write
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO:.*]]) -> (vector<8xf32>)
// CHECK: vector.transfer_read %arg0
// CHECK: }
// CHECK: vector.transfer_write %{{.*}}, %arg1
// CHECK-NOT: vector.transfer_write
gpu.module @kernels {
  gpu.func @accumulate(%a: memref<64x64xf32>, %c: memref<64x64xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %pad = arith.constant 0.0 : f32
    %zero = arith.constant dense<0.0> : vector<8xf32>
    %tx = gpu.thread_id x
    vector.transfer_write %zero, %c[%tx, %c0] {in_bounds = [true]} : vector<8xf32>, memref<64x64xf32>
    %init = vector.transfer_read %c[%tx, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<8xf32>
    %sum = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %init) -> (vector<8xf32>) {
      %v = vector.transfer_read %a[%k, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<8xf32>
      %n = arith.addf %acc, %v : vector<8xf32>
      scf.yield %n : vector<8xf32>
    }
    vector.transfer_write %sum, %c[%tx, %c0] {in_bounds = [true]} : vector<8xf32>, memref<64x64xf32>
    gpu.return
  }
}
