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
