// RUN: kforge-opt %s -split-input-file -kforge-workgroup-allocs-to-attributions -verify-diagnostics | FileCheck %s

// Promotion put the shared buffer on the host: it becomes the kernel's workgroup attribution.
// CHECK-LABEL: func.func @promoted
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[SHARED:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.store %{{.*}}, %[[SHARED]]
func.func @promoted() {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %shared = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  memref.dealloc %shared : memref<64xf32, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @two_kernels() {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{shared-memory allocation is used outside a single gpu.launch}}
  %shared = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}
