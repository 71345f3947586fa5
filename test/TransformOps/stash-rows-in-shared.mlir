// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// A row softmax block of 64 threads, 8 values each: the row read (%v) lives across the max reduction and the
// exponentials (%e) across the sum. With quarters = 2, the last 4 of each go to shared memory: %v's by
// cp.async straight from global memory (only its first 4 are read into registers), waited for before the max
// and again before the exponentials; %e's by stores after math.exp, loaded back after the sum. The two live
// ranges share one slot (%v's reload comes before %e is computed): 4 x 64 words, element k of thread t at
// k * 64 + t (a warp's accesses on 32 consecutive words), a workgroup attribution (under 48 KB).
// CHECK-LABEL: func.func @row_softmax
// CHECK: gpu.launch {{.*}} threads(%[[TX:[^,]*]], {{.*}} workgroup(%[[STASH:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[KEPT:.*]] = vector.transfer_read {{.*}} : memref<1x8xf32, strided<[512, 64], offset: ?>>, vector<4xf32>
// CHECK: memref.extract_strided_metadata
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}}, %[[STASH]][{{.*}}], 1 : memref<1xf32, strided<[1], offset: ?>> to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: %[[GROUP:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 0 : i32}
// CHECK: vector.extract %[[KEPT]][3]
// CHECK: %[[AT:.*]] = arith.addi %c192{{.*}}, %[[TX]]
// CHECK: memref.load %[[STASH]][%[[AT]]]
// CHECK: %[[WHOLE:.*]] = vector.from_elements
// CHECK: vector.reduction <maximumf>, %[[WHOLE]]
// CHECK: gpu.all_reduce maximumf
// CHECK: nvgpu.device_async_wait %[[GROUP]]
// CHECK: %[[AGAIN:.*]] = vector.from_elements
// CHECK: arith.subf %[[AGAIN]]
// CHECK: math.exp
// CHECK-COUNT-4: memref.store {{.*}}, %[[STASH]]
// CHECK: gpu.all_reduce add
// CHECK-COUNT-4: memref.load %[[STASH]]
// CHECK: %[[EXPS:.*]] = vector.from_elements
// CHECK: arith.divf %[[EXPS]]
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
    %s = transform.kforge.stash_rows_in_shared %launch {quarters = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// No block-wide reduction: nothing lives across one.
func.func @no_reduction(%x: memref<16x512xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{the launch's entry block has no block-wide reduction (gpu.all_reduce) or barrier}}
    %s = transform.kforge.stash_rows_in_shared %launch {quarters = 2} : (!transform.any_op) -> !transform.any_op
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
    %s = transform.kforge.stash_rows_in_shared %f {quarters = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A reduction with no vector live across it (the row is used before it only).
func.func @nothing_live(%x: memref<16x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = vector.transfer_read %x[%c0, %c0], %pad {in_bounds = [true]} : memref<16x512xf32>, vector<8xf32>
    %m = vector.reduction <add>, %v : vector<8xf32> into f32
    %sum = gpu.all_reduce add %m uniform {} : (f32) -> f32
    memref.store %sum, %x[%c0, %c0] : memref<16x512xf32>
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{no vector of two or more elements is live across a block-wide reduction}}
    %s = transform.kforge.stash_rows_in_shared %launch {quarters = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @quarters() {
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{quarters must be 1, 2 or 3 (of each vector's elements), not 4}}
    %s = transform.kforge.stash_rows_in_shared %f {quarters = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// More than a block's shared memory: 3 quarters of 128 elements over 1024 threads, 393,216 bytes.
func.func @too_much(%x: memref<16x131072xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %pad = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1024, %sy = %c1, %sz = %c1) {
    %v = vector.transfer_read %x[%c0, %c0], %pad {in_bounds = [true]} : memref<16x131072xf32>, vector<128xf32>
    %m = vector.reduction <add>, %v : vector<128xf32> into f32
    %sum = gpu.all_reduce add %m uniform {} : (f32) -> f32
    %b = vector.broadcast %sum : f32 to vector<128xf32>
    %r = arith.divf %v, %b : vector<128xf32>
    vector.transfer_write %r, %x[%c0, %c0] {in_bounds = [true]} : vector<128xf32>, memref<16x131072xf32>
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{the stash of 1 x 96 elements x 1024 threads would take 393216 bytes of shared memory; a block has at most 232448}}
    %s = transform.kforge.stash_rows_in_shared %launch {quarters = 3} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A 2-D block: the stash's layout is by the linear thread id of a 1-D block.
func.func @two_d_block() {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c16, %sz = %c1) {
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{expected a launch of a 1-D block of static size}}
    %s = transform.kforge.stash_rows_in_shared %launch {quarters = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// One quarter of a 2-element vector is no element.
func.func @too_short(%x: memref<16x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = vector.transfer_read %x[%c0, %c0], %pad {in_bounds = [true]} : memref<16x512xf32>, vector<2xf32>
    %m = vector.reduction <add>, %v : vector<2xf32> into f32
    %sum = gpu.all_reduce add %m uniform {} : (f32) -> f32
    %b = vector.broadcast %sum : f32 to vector<2xf32>
    %r = arith.divf %v, %b : vector<2xf32>
    vector.transfer_write %r, %x[%c0, %c0] {in_bounds = [true]} : vector<2xf32>, memref<16x512xf32>
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{quarters = 1 of a 2-element vector rounds down to no element}}
    %s = transform.kforge.stash_rows_in_shared %launch {quarters = 1} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
