// RUN: kforge-opt %s -split-input-file -kforge-kernel-allocs-to-alloca -verify-diagnostics | FileCheck %s

// Per-thread scratch inside a kernel: an alloca, not a device malloc.
// CHECK-LABEL: func.func @scratch
// CHECK: gpu.launch
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK-NOT: memref.alloc(
// CHECK-NOT: memref.dealloc
// Workgroup (shared) memory is left to the GPU lowering.
// CHECK: memref.alloc() : memref<16xf32, #gpu.address_space<workgroup>>
func.func @scratch(%out: memref<4x4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %tmp = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
    memref.copy %tmp, %out : memref<4x4xf32> to memref<4x4xf32>
    memref.dealloc %tmp : memref<4x4xf32>
    %shared = memref.alloc() : memref<16xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}

// -----

func.func @dynamic(%n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{dynamically shaped allocation inside a GPU kernel would become a device malloc}}
    %tmp = memref.alloc(%n) : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A thread's share of a partial block tile (32 threads over a block tile of min(126 - 32 * bx, 32) columns,
// each ceil(n / 32) wide, none below 0), plus a window's halo of 2: its first term is a product of two values,
// which ValueBounds cannot take whole; its bounds come term by term: at most ceil(32 / 32) + 2 = 3.
// CHECK-LABEL: func.func @thread_share
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x3xf32>
// CHECK: memref.subview %[[BUF]][0, 0] [4, %{{.*}}] [1, 1]
func.func @thread_share(%out: memref<4x3xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %block = affine.min affine_map<()[s0] -> (s0 * -32 + 126, 32)>()[%bx]
    %share = affine.min affine_map<()[s0, s1] -> (s0 - s1 * (s0 ceildiv 32), s0 ceildiv 32)>()[%block, %tx]
    %size = affine.max affine_map<()[s0] -> (0, s0)>()[%share]
    %halo = affine.apply affine_map<()[s0] -> (s0 + 2)>()[%size]
    %tmp = memref.alloc(%halo) {alignment = 64 : i64} : memref<4x?xf32>
    %view = memref.subview %out[0, 0] [4, %halo] [1, 1] : memref<4x3xf32> to memref<4x?xf32, strided<[3, 1]>>
    memref.copy %tmp, %view : memref<4x?xf32> to memref<4x?xf32, strided<[3, 1]>>
    gpu.terminator
  }
  return
}
