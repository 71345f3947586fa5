// RUN: kforge-opt %s --split-input-file --kforge-lower-to-nvvm="format=isa" | FileCheck %s

// Importer form: the function returns a new tensor. The result becomes a trailing output argument the caller
// provides; nothing is allocated on the host (no malloc) or on the device.
// CHECK-LABEL: llvm.func @scale(
// CHECK-NOT: llvm.call @malloc
// CHECK-NOT: mgpuMemAlloc
// CHECK: gpu.launch_func
// CHECK: llvm.func @_mlir_ciface_scale(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
func.func @scale(%in: tensor<256xf32>) -> tensor<256xf32> {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %two = arith.constant 2.0 : f32
  %a = bufferization.to_buffer %in : tensor<256xf32> to memref<256xf32>
  %out = memref.alloc() : memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %a[%tx] : memref<256xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  %r = bufferization.to_tensor %out restrict : memref<256xf32> to tensor<256xf32>
  return %r : tensor<256xf32>
}

// -----

// A temporary between two kernels is device memory, allocated and freed through the GPU runtime.
// CHECK-LABEL: llvm.func @two_kernels(
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func @two_kernels_kernel::@two_kernels_kernel
// CHECK: gpu.launch_func @two_kernels_kernel_0::@two_kernels_kernel
// CHECK: llvm.call @mgpuMemFree
// CHECK-NOT: llvm.call @malloc
func.func @two_kernels(%a: memref<256xf32>, %b: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %tmp = memref.alloc() : memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %a[%tx] : memref<256xf32>
    memref.store %x, %tmp[%tx] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %tmp[%tx] : memref<256xf32>
    memref.store %x, %b[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}
