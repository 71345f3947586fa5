// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// Block b reads row b of %x (and writes row b of %y): thread (0, 0, 0) prefetches row b + 4 of %x into L2
// when it exists (16 rows), one bulk prefetch of the row's 512 bytes at %x's aligned pointer + (b + 4) * 512.
// The output is not prefetched.
// CHECK-LABEL: func.func @row_kernel
// CHECK: gpu.launch
// CHECK: %[[TX:.*]] = gpu.thread_id x
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[NEXT:.*]] = arith.addi %[[BID]], %c4
// CHECK: %[[EXISTS:.*]] = arith.cmpi ult, %[[NEXT]], %c16
// CHECK: scf.if
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %arg0 : memref<16x128xf32> -> index
// CHECK: %[[ELEMENT:.*]] = arith.muli %[[NEXT]], %c128
// CHECK: llvm.inttoptr
// CHECK: %[[PTR:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr to !llvm.ptr<1>
// CHECK: nvvm.cp.async.bulk.prefetch %[[PTR]], %c512_i32 : <1>
// CHECK-NOT: nvvm.cp.async.bulk.prefetch
// CHECK: }
// CHECK: memref.subview %arg0[%{{.*}}, 0] [1, 128] [1, 1]
func.func @row_kernel(%x: memref<16x128xf32>, %y: memref<16x128xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    %row = memref.subview %x[%b, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    %out = memref.subview %y[%b, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    memref.copy %row, %out : memref<1x128xf32, strided<[128, 1], offset: ?>> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    %prefetching = transform.kforge.prefetch_rows_to_l2 %launch {ahead = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Rows of 5 floats (20 bytes; row r starts 20 r bytes in, not 16-byte aligned): the prefetch takes the 16-byte
// pieces from the one holding the row's start to the last one ending inside it, [start & ~15, end & ~15): inside
// the buffer, the bytes before the row's start included.
// CHECK-LABEL: func.func @unaligned_rows
// CHECK: scf.if
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %arg0 : memref<16x5xf32> -> index
// CHECK: %[[START:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK: %[[END:.*]] = arith.addi %[[START]], %c20 : index
// CHECK: %[[FIRST:.*]] = arith.andi %[[START]], %c-16 : index
// CHECK: %[[LAST:.*]] = arith.andi %[[END]], %c-16 : index
// CHECK: %[[LENGTH:.*]] = arith.subi %[[LAST]], %[[FIRST]] : index
// CHECK: %[[SIZE:.*]] = arith.index_castui %[[LENGTH]] : index to i32
// CHECK: %[[ADDRESS:.*]] = arith.index_castui %[[FIRST]] : index to i64
// CHECK: llvm.inttoptr %[[ADDRESS]]
// CHECK: nvvm.cp.async.bulk.prefetch %{{.*}}, %[[SIZE]] : <1>
func.func @unaligned_rows(%x: memref<16x5xf32>, %y: memref<16x5xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    %row = memref.subview %x[%b, 0] [1, 5] [1, 1] : memref<16x5xf32> to memref<1x5xf32, strided<[5, 1], offset: ?>>
    %out = memref.subview %y[%b, 0] [1, 5] [1, 1] : memref<16x5xf32> to memref<1x5xf32, strided<[5, 1], offset: ?>>
    memref.copy %row, %out : memref<1x5xf32, strided<[5, 1], offset: ?>> to memref<1x5xf32, strided<[5, 1], offset: ?>>
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    %prefetching = transform.kforge.prefetch_rows_to_l2 %launch {ahead = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Rows of 3 floats (12 bytes) are shorter than the bulk prefetch's 16-byte piece: no prefetch.
func.func @narrow_rows(%x: memref<16x3xf32>, %y: memref<16x3xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    %row = memref.subview %x[%b, 0] [1, 3] [1, 1] : memref<16x3xf32> to memref<1x3xf32, strided<[3, 1], offset: ?>>
    %out = memref.subview %y[%b, 0] [1, 3] [1, 1] : memref<16x3xf32> to memref<1x3xf32, strided<[3, 1], offset: ?>>
    memref.copy %row, %out : memref<1x3xf32, strided<[3, 1], offset: ?>> to memref<1x3xf32, strided<[3, 1], offset: ?>>
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the launch reads no row of a kernel input at [block_id x, 0]}}
    %prefetching = transform.kforge.prefetch_rows_to_l2 %launch {ahead = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @not_a_launch() {
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected a gpu.launch}}
    %prefetching = transform.kforge.prefetch_rows_to_l2 %f {ahead = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @+1 {{ahead must be a positive number of rows, not 0}}
    %prefetching = transform.kforge.prefetch_rows_to_l2 %root {ahead = 0} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
