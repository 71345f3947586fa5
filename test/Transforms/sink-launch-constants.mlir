// RUN: kforge-opt %s -kforge-sink-launch-constants | FileCheck %s

// A loop converted structurally to i64 (as convert-nvgpu-to-nvvm leaves it) has bounds that are casts of host
// constants: they are rematerialised inside the launch, so outlining passes no loop bound as an argument. A
// value computed on the host from an argument stays outside.
// CHECK-LABEL: func.func @launch
// CHECK: gpu.launch
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[S4:.*]] = builtin.unrealized_conversion_cast %[[C4]] : index to i64
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[S0:.*]] = builtin.unrealized_conversion_cast %[[C0]] : index to i64
// CHECK: scf.for %{{.*}} = %[[S0]] to %{{.*}} step %[[S4]] : i64
// CHECK: arith.addi %{{.*}}, %[[HOST:.*]] : i64
func.func @launch(%n: i64) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %lb = builtin.unrealized_conversion_cast %c0 : index to i64
  %ub = builtin.unrealized_conversion_cast %c64 : index to i64
  %step = builtin.unrealized_conversion_cast %c4 : index to i64
  %host = arith.muli %n, %n : i64
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.for %i = %lb to %ub step %step : i64 {
      %x = arith.addi %i, %host : i64
    }
    gpu.terminator
  }
  return
}

// A constant global (a rank-0 `arith.constant dense<...> : tensor<f32>` operand, bufferized) read in a kernel:
// its get_global moves into the launch, so outlining copies the global into the GPU module instead of passing
// the kernel a host address (CUDA_ERROR_ILLEGAL_ADDRESS in the naive reference of gemm + multiply +
// leaky-relu). A mutable global stays outside.
// CHECK-LABEL: func.func @constant_global
// CHECK: %[[MUTABLE:.*]] = memref.get_global @mutable
// CHECK: gpu.launch
// CHECK: %[[ZERO:.*]] = memref.get_global @zero : memref<f32>
// CHECK: memref.load %[[ZERO]][]
// CHECK: memref.load %[[MUTABLE]][]
memref.global "private" constant @zero : memref<f32> = dense<0.000000e+00>
memref.global "private" @mutable : memref<f32> = dense<1.000000e+00>
func.func @constant_global(%out: memref<f32>) {
  %c1 = arith.constant 1 : index
  %zero = memref.get_global @zero : memref<f32>
  %mutable = memref.get_global @mutable : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %z = memref.load %zero[] : memref<f32>
    %m = memref.load %mutable[] : memref<f32>
    %s = arith.addf %z, %m : f32
    memref.store %s, %out[] : memref<f32>
    gpu.terminator
  }
  return
}

// An LLVM undef (a wgmma tile's accumulator struct, which the canonicalizer hoists out of the launch) is
// rematerialised inside it: outlined from the host it was a kernel argument of 512 bytes.
// CHECK-LABEL: func.func @undef_struct
// CHECK: gpu.launch
// CHECK: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(f32, f32)>
// CHECK: llvm.insertvalue %{{.*}}, %[[U]][0]
func.func @undef_struct(%x: f32) {
  %c1 = arith.constant 1 : index
  %u = llvm.mlir.undef : !llvm.struct<(f32, f32)>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %s = llvm.insertvalue %x, %u[0] : !llvm.struct<(f32, f32)>
    gpu.terminator
  }
  return
}
