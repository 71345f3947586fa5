// RUN: kforge-opt %s -split-input-file -kforge-promote-loop-accumulators | FileCheck %s

// A thread's scalar reduction, lowered to loops: the accumulator (a location of an allocation) is read
// before the loops and written after them, carried through both; the unit loop is gone.
// CHECK-LABEL: func.func @reduction_in_kernel(
// CHECK:       gpu.launch
// CHECK:         %[[INIT:.*]] = memref.load %[[ACC:.*]][%{{.*}}] : memref<256xf32>
// CHECK-NEXT:    %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CARRIED:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NOT:       memref.store
// CHECK:           %[[X:.*]] = memref.load %{{.*}} : memref<256x1024xf32>
// CHECK:           %[[NEW:.*]] = arith.addf %[[X]], %[[CARRIED]] : f32
// CHECK:           scf.yield %[[NEW]] : f32
// CHECK:         }
// CHECK-NEXT:    memref.store %[[SUM]], %[[ACC]][%{{.*}}] : memref<256xf32>
func.func @reduction_in_kernel(%in: memref<256x1024xf32>, %out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %acc = memref.alloc() : memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    scf.for %u = %c0 to %c1 step %c1 {
      scf.for %k = %c0 to %c1024 step %c1 {
        %x = memref.load %in[%tx, %k] : memref<256x1024xf32>
        %a = memref.load %acc[%tx] : memref<256xf32>
        %s = arith.addf %x, %a : f32
        memref.store %s, %acc[%tx] : memref<256xf32>
      }
    }
    gpu.terminator
  }
  memref.copy %acc, %out : memref<256xf32> to memref<256xf32>
  return
}

// -----

// A function argument may alias the other argument the loop reads: left as it is.
// CHECK-LABEL: func.func @argument_may_alias(
// CHECK:       scf.for
// CHECK-NOT:     iter_args
// CHECK:         memref.store
func.func @argument_may_alias(%in: memref<256x1024xf32>, %acc: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    scf.for %k = %c0 to %c1024 step %c1 {
      %x = memref.load %in[%tx, %k] : memref<256x1024xf32>
      %a = memref.load %acc[%tx] : memref<256xf32>
      %s = arith.addf %x, %a : f32
      memref.store %s, %acc[%tx] : memref<256xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier in the loop (other threads may read the location meanwhile), a second location of the same
// allocation read, a read after the write, a loop outside any kernel: each left as it is.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: iter_args
func.func @left_alone(%in: memref<256x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %acc = memref.alloc() : memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    scf.for %k = %c0 to %c1024 step %c1 {
      %x = memref.load %in[%tx, %k] : memref<256x1024xf32>
      %a = memref.load %acc[%tx] : memref<256xf32>
      %s = arith.addf %x, %a : f32
      memref.store %s, %acc[%tx] : memref<256xf32>
      gpu.barrier
    }
    scf.for %k = %c0 to %c1024 step %c1 {
      %x = memref.load %acc[%c0] : memref<256xf32>
      %a = memref.load %acc[%tx] : memref<256xf32>
      %s = arith.addf %x, %a : f32
      memref.store %s, %acc[%tx] : memref<256xf32>
    }
    scf.for %k = %c0 to %c1024 step %c1 {
      %a = memref.load %acc[%tx] : memref<256xf32>
      %s = arith.addf %a, %a : f32
      memref.store %s, %acc[%tx] : memref<256xf32>
      %again = memref.load %acc[%tx] : memref<256xf32>
      memref.store %again, %acc[%c0] : memref<256xf32>
    }
    gpu.terminator
  }
  scf.for %k = %c0 to %c1024 step %c1 {
    %x = memref.load %in[%c0, %k] : memref<256x1024xf32>
    %a = memref.load %acc[%c0] : memref<256xf32>
    %s = arith.addf %x, %a : f32
    memref.store %s, %acc[%c0] : memref<256xf32>
  }
  return
}
