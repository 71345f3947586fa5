// RUN: kforge-opt %s --kforge-lower-subgroup-reduce | FileCheck %s

// A uniform all-reduce over a block of whole warps of a known size (a row over 256 lanes): each warp's
// butterfly, lane 0 writes the warp's partial to a buffer of the reduction's own, ONE barrier, then every warp
// reads the 8 partials (lane l: partial l mod 8) and reduces them in clusters of 8 lanes. Two dependent
// reductions: two buffers, two barriers. The barrier right before the return goes.
// CHECK-LABEL: gpu.func @block256
// CHECK-SAME: workgroup(%[[B0:.*]] : memref<8xf32, #gpu.address_space<workgroup>>, %[[B1:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: cf.cond_br %[[FIRST]], ^[[STORE:.*]], ^[[AFTER:.*]]
// CHECK: ^[[STORE]]:
// CHECK-NEXT: memref.store %{{.*}}, %[[B1]][%[[WARP]]]
// CHECK: ^[[AFTER]]:
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[LANE]], %c8
// CHECK-NEXT: memref.load %[[B1]][%[[SLOT]]]
// CHECK-COUNT-3: gpu.shuffle xor
// CHECK-NEXT: arith.addf
// CHECK-NEXT: gpu.thread_id x
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[B0]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[B0]]
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
gpu.module @kernels {
  gpu.func @block256(%out: memref<256xf32>, %v: f32) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %sum = gpu.all_reduce add %v uniform {} : (f32) -> f32
    %max = gpu.all_reduce maximumf %sum uniform {} : (f32) -> f32
    %t = gpu.thread_id x
    memref.store %max, %out[%t] : memref<256xf32>
    gpu.barrier
    gpu.return
  }

// 25 warps (a 32000-wide row over 800 lanes): the partials are read by whole warps; lanes 25-31 take the
// neutral element (0 for a sum) instead of a partial, from a buffer of 25.
// CHECK-LABEL: gpu.func @block800
// CHECK-SAME: workgroup(%[[B:.*]] : memref<25xf32, #gpu.address_space<workgroup>>)
// CHECK: gpu.barrier
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %{{.*}}, %c32
// CHECK-NEXT: %[[VALID:.*]] = arith.cmpi ult, %[[SLOT]], %c25
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[VALID]], %[[SLOT]], %c0
// CHECK-NEXT: %[[P:.*]] = memref.load %[[B]][%[[SAFE]]]
// CHECK-NEXT: arith.select %[[VALID]], %[[P]], %cst
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
  gpu.func @block800(%v: f32, %out: memref<f32>) kernel attributes {known_block_size = array<i32: 800, 1, 1>} {
    %sum = gpu.all_reduce add %v uniform {} : (f32) -> f32
    memref.store %sum, %out[] : memref<f32>
    gpu.return
  }

// A 3-D block: the linear thread index x + 32 * (y + 4 * z) picks the lane and the warp.
// CHECK-LABEL: gpu.func @block2d
// CHECK-SAME: workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-DAG: gpu.thread_id x
// CHECK-DAG: gpu.thread_id y
// CHECK-DAG: gpu.thread_id z
// CHECK-COUNT-1: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
  gpu.func @block2d(%v: f32, %out: memref<f32>) kernel attributes {known_block_size = array<i32: 32, 4, 2>} {
    %sum = gpu.all_reduce add %v uniform {} : (f32) -> f32
    memref.store %sum, %out[] : memref<f32>
    gpu.return
  }

// No known block size: upstream's lowering (warp 0 reduces the partials: two barriers, a 32-entry buffer).
// CHECK-LABEL: gpu.func @unknown
// CHECK-SAME: workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK: gpu.block_dim
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: gpu.return
  gpu.func @unknown(%v: f32, %out: memref<f32>) kernel {
    %sum = gpu.all_reduce add %v uniform {} : (f32) -> f32
    memref.store %sum, %out[] : memref<f32>
    gpu.return
  }

// On a loop the reduction runs more than once, and one barrier would let a fast warp overwrite a partial that
// a slow warp has still to read: upstream's lowering, with its second barrier.
// CHECK-LABEL: gpu.func @loop
// CHECK-SAME: workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: gpu.return
  gpu.func @loop(%v: f32, %out: memref<f32>, %n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    cf.br ^head(%c0, %v : index, f32)
  ^head(%i: index, %acc: f32):
    %more = arith.cmpi ult, %i, %n : index
    cf.cond_br %more, ^body, ^exit
  ^body:
    %sum = gpu.all_reduce add %acc uniform {} : (f32) -> f32
    %next = arith.addi %i, %c1 : index
    cf.br ^head(%next, %sum : index, f32)
  ^exit:
    memref.store %acc, %out[] : memref<f32>
    gpu.return
  }
}
