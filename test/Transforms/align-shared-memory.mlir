// RUN: kforge-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(kforge-align-shared-memory))' | FileCheck %s
// RUN: not kforge-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(kforge-align-shared-memory{alignment=12}))' 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: alignment must be a positive power of two, not 12

// Shared buffers get 16-byte alignment (128-bit accesses); other globals and larger alignments are kept.
// CHECK-LABEL: gpu.module @kernels
// CHECK: memref.global "private" @numeric : memref<64xf32, 3> {alignment = 16 : i64}
// CHECK: memref.global "private" @symbolic : memref<64xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64}
// CHECK: memref.global "private" @already : memref<64xf32, 3> {alignment = 64 : i64}
// CHECK: memref.global "private" @global_memory : memref<64xf32>{{$}}
// CHECK: gpu.func @kernel() workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
gpu.module @kernels {
  memref.global "private" @numeric : memref<64xf32, 3>
  memref.global "private" @symbolic : memref<64xf32, #gpu.address_space<workgroup>>
  memref.global "private" @already : memref<64xf32, 3> {alignment = 64}
  memref.global "private" @global_memory : memref<64xf32>
  gpu.func @kernel() workgroup(%w : memref<32xf32, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
}
