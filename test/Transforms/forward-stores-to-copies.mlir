// RUN: kforge-opt %s -split-input-file -kforge-forward-stores-to-copies | FileCheck %s

// A lane's slice of a row that bufferization copied through per-thread scratch: the vector is written to the
// strided destination directly, the scratch buffer and the copy are gone.
// CHECK-LABEL: func.func @forwarded
// CHECK: gpu.launch
// CHECK-NOT: memref.alloca
// CHECK: %[[V:.*]] = arith.addf
// CHECK-NOT: vector.store
// CHECK: vector.transfer_write %[[V]], %{{.*}}[%{{.*}}, %{{.*}}] {in_bounds = [true]} : vector<10xf32>, memref<1x10xf32, strided<[32000, 3200], offset: ?>>
// CHECK-NOT: memref.copy
func.func @forwarded(%out: memref<1x32000xf32>, %v: vector<10xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %scratch = memref.alloca() {alignment = 64 : i64} : memref<1x10xf32>
    %w = arith.addf %v, %v : vector<10xf32>
    vector.store %w, %scratch[%c0, %c0] : memref<1x10xf32>, vector<10xf32>
    %slice = memref.subview %out[0, %tx] [1, 10] [1, 3200] : memref<1x32000xf32> to memref<1x10xf32, strided<[32000, 3200], offset: ?>>
    memref.copy %scratch, %slice : memref<1x10xf32> to memref<1x10xf32, strided<[32000, 3200], offset: ?>>
    gpu.terminator
  }
  return
}

// -----

// Left alone: the scratch buffer is read again after the copy, or only part of it is stored, or the copy is
// on the host.
// CHECK-LABEL: func.func @kept
// CHECK: memref.alloca
// CHECK: memref.copy
// CHECK: memref.load
// CHECK: memref.alloca
// CHECK: memref.copy
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @kept(%out: memref<1x10xf32>, %v: vector<10xf32>, %half: vector<5xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %reread = memref.alloca() : memref<1x10xf32>
    vector.store %v, %reread[%c0, %c0] : memref<1x10xf32>, vector<10xf32>
    memref.copy %reread, %out : memref<1x10xf32> to memref<1x10xf32>
    %x = memref.load %reread[%c0, %c0] : memref<1x10xf32>
    %part = memref.alloca() : memref<1x10xf32>
    vector.store %half, %part[%c0, %c0] : memref<1x10xf32>, vector<5xf32>
    memref.copy %part, %out : memref<1x10xf32> to memref<1x10xf32>
    gpu.terminator
  }
  %host = memref.alloc() : memref<1x10xf32>
  vector.store %v, %host[%c0, %c0] : memref<1x10xf32>, vector<10xf32>
  memref.copy %host, %out : memref<1x10xf32> to memref<1x10xf32>
  return
}
