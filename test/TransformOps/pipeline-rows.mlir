// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// A row softmax of 16 rows over 4 blocks of 64 threads: the grid becomes 4 blocks, each looping over rows
// b, b + 4, ...; thread 0 initialises the mbarrier and copies the block's first row into shared memory (one
// bulk copy of 2048 bytes, expected on the mbarrier); in each iteration every thread waits for the mbarrier's
// phase ((row - b) / 4) % 2, reads its 8 values from the copy element by element (memref.load: nothing hoists
// them out of the loop), and after the first reduction and a barrier thread 0 starts the next row's copy, if
// there is one. The output's row is the loop's.
// CHECK-LABEL: func.func @row_softmax
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C4]], {{.*}} threads(%[[TX:[^,]*]], {{.*}} workgroup(%[[ROW:.*]] : memref<1x512xf32, #gpu.address_space<workgroup>>, %[[BAR:.*]] : memref<1xi64, #gpu.address_space<workgroup>>)
// CHECK: %[[B:.*]] = gpu.block_id x
// CHECK: scf.if
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c2048_i32
// CHECK: arith.muli %[[B]], %c2048
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: gpu.barrier
// CHECK: scf.for %[[R:.*]] = %[[B]] to %c16{{.*}} step %[[C4]]
// CHECK: arith.subi %[[R]], %[[B]]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "~{memory}"
// CHECK: memref.subview %[[ROW]][0, %{{.*}}] [1, 8] [1, 64]
// CHECK-COUNT-8: memref.load
// CHECK: vector.from_elements
// CHECK: gpu.all_reduce maximumf
// CHECK-NEXT: } : (f32) -> f32
// CHECK-NEXT: gpu.barrier
// CHECK: %[[NEXT:.*]] = arith.addi %[[R]], %[[C4]]
// CHECK: arith.cmpi ult, %[[NEXT]], %c16
// CHECK: scf.if
// CHECK: arith.muli %[[NEXT]], %c2048
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: gpu.all_reduce add
// CHECK: memref.subview %arg1[%[[R]], 0] [1, 512] [1, 1]
// CHECK: vector.transfer_write
func.func @row_softmax(%x: memref<16x512xf32>, %y: memref<16x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    %t = gpu.thread_id x
    %row = memref.subview %x[%b, 0] [1, 512] [1, 1] : memref<16x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    %slice = memref.subview %row[0, %t] [1, 8] [1, 64] : memref<1x512xf32, strided<[512, 1], offset: ?>> to memref<1x8xf32, strided<[512, 64], offset: ?>>
    %v = vector.transfer_read %slice[%c0, %c0], %pad {in_bounds = [true]} : memref<1x8xf32, strided<[512, 64], offset: ?>>, vector<8xf32>
    %m = vector.reduction <maximumf>, %v : vector<8xf32> into f32
    %max = gpu.all_reduce maximumf %m uniform {} : (f32) -> f32
    %maxv = vector.broadcast %max : f32 to vector<8xf32>
    %d = arith.subf %v, %maxv : vector<8xf32>
    %e = math.exp %d : vector<8xf32>
    %s = vector.reduction <add>, %e : vector<8xf32> into f32
    %sum = gpu.all_reduce add %s uniform {} : (f32) -> f32
    %sumv = vector.broadcast %sum : f32 to vector<8xf32>
    %r = arith.divf %e, %sumv : vector<8xf32>
    %orow = memref.subview %y[%b, 0] [1, 512] [1, 1] : memref<16x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    %oslice = memref.subview %orow[0, %t] [1, 8] [1, 64] : memref<1x512xf32, strided<[512, 1], offset: ?>> to memref<1x8xf32, strided<[512, 64], offset: ?>>
    vector.transfer_write %r, %oslice[%c0, %c0] {in_bounds = [true]} : vector<8xf32>, memref<1x8xf32, strided<[512, 64], offset: ?>>
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    %s = transform.kforge.pipeline_rows %launch {blocks = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Not a launch.
func.func @not_a_launch() {
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{expected a gpu.launch}}
    %p = transform.kforge.pipeline_rows %f {blocks = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// More blocks than rows.
func.func @too_many_blocks() {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{blocks = 32 is more than the launch's 16 rows}}
    %p = transform.kforge.pipeline_rows %launch {blocks = 32} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// No block-wide reduction.
func.func @no_reduction() {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{the launch's entry block has no block-wide reduction (gpu.all_reduce)}}
    %p = transform.kforge.pipeline_rows %launch {blocks = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// The row is read again after the first reduction (where the next row's copy overwrites it).
func.func @read_late(%x: memref<16x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    %row = memref.subview %x[%b, 0] [1, 512] [1, 1] : memref<16x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    %v = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : memref<1x512xf32, strided<[512, 1], offset: ?>>, vector<8xf32>
    %m = vector.reduction <add>, %v : vector<8xf32> into f32
    %sum = gpu.all_reduce add %m uniform {} : (f32) -> f32
    %again = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : memref<1x512xf32, strided<[512, 1], offset: ?>>, vector<8xf32>
    %s2 = vector.reduction <add>, %again : vector<8xf32> into f32
    %total = arith.addf %sum, %s2 : f32
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{the row is read after the block's first reduction (where the next row's copy overwrites it)}}
    %p = transform.kforge.pipeline_rows %launch {blocks = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// No row of a kernel input (the launch writes the only row it reads).
func.func @written_row(%x: memref<16x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    %row = memref.subview %x[%b, 0] [1, 512] [1, 1] : memref<16x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    %v = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : memref<1x512xf32, strided<[512, 1], offset: ?>>, vector<8xf32>
    %m = vector.reduction <add>, %v : vector<8xf32> into f32
    %sum = gpu.all_reduce add %m uniform {} : (f32) -> f32
    memref.store %sum, %x[%b, %c0] : memref<16x512xf32>
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{the launch reads no row of a kernel input at [block_id x, 0]}}
    %p = transform.kforge.pipeline_rows %launch {blocks = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @blocks() {
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{blocks must be positive, not 0}}
    %p = transform.kforge.pipeline_rows %f {blocks = 0} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
