// RUN: kforge-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(kforge-prove-vector-alignment))' | FileCheck %s
// RUN: not kforge-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(kforge-prove-vector-alignment{max-alignment=24}))' 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not kforge-opt %s -split-input-file -kforge-align-kernel-arguments=alignment=0 2>&1 | FileCheck %s --check-prefix=ARGS

// ERR: error: max-alignment must be a positive power of two, not 24
// ARGS: error: alignment must be a positive power of two, not 0

// A gemm tile's reads: A's rows at column k (the K loop's induction variable, step 4) and B's rows at a
// column that is a multiple of 8. The kernel arguments are 16-byte aligned (llvm.align), the row stride 4096
// elements: both reads become vector.load with alignment 16. Row 7 of an odd column (k + 1) is 4-byte
// aligned only, and a dynamic step proves nothing: no alignment recorded.
// CHECK-LABEL: gpu.func @tile
// CHECK: scf.for
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4096x4096xf32>, vector<4xf32>
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4096x4096xf32>, vector<8xf32>
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] : memref<4096x4096xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] {alignment = 16 : i64}
// CHECK: scf.for
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] : memref<4096x4096xf32>, vector<4xf32>
gpu.module @kernels {
  gpu.func @tile(%a: memref<4096x4096xf32> {llvm.align = 16 : i64}, %b: memref<4096x4096xf32> {llvm.align = 16 : i64},
                 %c: memref<4096x4096xf32> {llvm.align = 16 : i64}, %step: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c4096 = arith.constant 4096 : index
    %pad = arith.constant 0.0 : f32
    %tx = gpu.thread_id x
    %ty = gpu.thread_id y
    %row = affine.apply affine_map<()[s0] -> (s0 * 8 + 7)>()[%ty]
    %col = affine.apply affine_map<()[s0] -> (s0 * 8)>()[%tx]
    %acc = arith.constant dense<0.0> : vector<8xf32>
    %sum = scf.for %k = %c0 to %c4096 step %c4 iter_args(%s = %acc) -> (vector<8xf32>) {
      %ra = vector.transfer_read %a[%row, %k], %pad {in_bounds = [true]} : memref<4096x4096xf32>, vector<4xf32>
      %rb = vector.transfer_read %b[%k, %col], %pad {in_bounds = [true]} : memref<4096x4096xf32>, vector<8xf32>
      %k1 = arith.addi %k, %c1 : index
      %odd = vector.transfer_read %a[%row, %k1], %pad {in_bounds = [true]} : memref<4096x4096xf32>, vector<4xf32>
      %x = vector.extract %ra[0] : f32 from vector<4xf32>
      %y = vector.extract %odd[0] : f32 from vector<4xf32>
      %z = arith.addf %x, %y : f32
      %bz = vector.broadcast %z : f32 to vector<8xf32>
      %n = vector.fma %bz, %rb, %s : vector<8xf32>
      scf.yield %n : vector<8xf32>
    }
    vector.transfer_write %sum, %c[%row, %col] {in_bounds = [true]} : vector<8xf32>, memref<4096x4096xf32>
    scf.for %k = %c0 to %c4096 step %step {
      %r = vector.transfer_read %a[%row, %k], %pad {in_bounds = [true]} : memref<4096x4096xf32>, vector<4xf32>
      vector.transfer_write %r, %c[%row, %k] {in_bounds = [true]} : vector<4xf32>, memref<4096x4096xf32>
    }
    gpu.return
  }
}

// -----

// Shared memory (a memref.global with its alignment) through a subview at a multiple of 4 elements: 16 bytes;
// a base of unknown alignment (no llvm.align): nothing.
// CHECK-LABEL: gpu.func @shared
// CHECK: vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<32xf32, strided<[1], offset: ?>, 3>, vector<4xf32>
// CHECK: vector.load %arg0[%{{.*}}] : memref<64xf32>, vector<4xf32>
gpu.module @kernels {
  memref.global "private" @tile : memref<64xf32, 3> {alignment = 16 : i64}
  gpu.func @shared(%unknown: memref<64xf32>) kernel {
    %pad = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %tx = gpu.thread_id x
    %i = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%tx]
    %g = memref.get_global @tile : memref<64xf32, 3>
    %half = memref.subview %g[%i] [32] [1] : memref<64xf32, 3> to memref<32xf32, strided<[1], offset: ?>, 3>
    %v = vector.transfer_read %half[%c0], %pad {in_bounds = [true]} : memref<32xf32, strided<[1], offset: ?>, 3>, vector<4xf32>
    %w = vector.transfer_read %unknown[%i], %pad {in_bounds = [true]} : memref<64xf32>, vector<4xf32>
    %s = arith.addf %v, %w : vector<4xf32>
    vector.transfer_write %s, %half[%c0] {in_bounds = [true]} : vector<4xf32>, memref<32xf32, strided<[1], offset: ?>, 3>
    gpu.return
  }
}
