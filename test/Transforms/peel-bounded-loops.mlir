// RUN: kforge-opt %s --kforge-peel-bounded-loops --split-input-file | FileCheck %s

// A lane's ragged slice of a 4095-wide row over 256 lanes: lane l owns ceil((4095 - l) / 256) columns, 15 or 16.
// The loop summing them becomes 15 iterations with a constant bound, then the 16th under an scf.if that carries
// the sum on (lanes 0 to 254 run it).
// CHECK-LABEL: func.func @ragged_sum
// CHECK-DAG:     %[[C15:.*]] = arith.constant 15 : index
// CHECK:         %[[MAIN:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C15]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32)
// CHECK:         %[[MORE:.*]] = arith.cmpi slt, %[[C15]], %[[UB:.*]] : index
// CHECK:         %[[LAST:.*]] = scf.if %[[MORE]] -> (f32) {
// CHECK:           memref.load %{{.*}}[%{{.*}}] : memref<4095xf32>
// CHECK:           scf.yield
// CHECK:         } else {
// CHECK:           scf.yield %[[MAIN]] : f32
// CHECK:         }
// CHECK:         memref.store %[[LAST]]
// CHECK-NOT:     scf.for
#lane_count = affine_map<()[s0] -> ((-s0 + 4350) floordiv 256)>
#column = affine_map<(d0)[s0] -> (d0 * 256 + s0)>
func.func @ragged_sum(%row: memref<4095xf32>, %out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %count = affine.apply #lane_count()[%tx]
    %sum = scf.for %i = %c0 to %count step %c1 iter_args(%acc = %zero) -> (f32) {
      %col = affine.apply #column(%i)[%tx]
      %x = memref.load %row[%col] : memref<4095xf32>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    memref.store %sum, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// The lane's values kept in a private array: the 15 full iterations are unrolled (every index static, so the
// array can live in registers), the 16th is guarded.
// CHECK-LABEL: func.func @ragged_private_array
// CHECK-NOT:     scf.for
// CHECK-COUNT-15: memref.store %{{.*}}, %[[ARRAY:.*]][%{{.*}}] : memref<16xf32>
// CHECK:         scf.if
// CHECK:           memref.store %{{.*}}, %[[ARRAY]][%{{.*}}] : memref<16xf32>
// CHECK-NOT:     scf.for
#lane_count = affine_map<()[s0] -> ((-s0 + 4350) floordiv 256)>
#column = affine_map<(d0)[s0] -> (d0 * 256 + s0)>
func.func @ragged_private_array(%row: memref<4095xf32>, %out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %array = memref.alloca() : memref<16xf32>
    %count = affine.apply #lane_count()[%tx]
    scf.for %i = %c0 to %count step %c1 {
      %col = affine.apply #column(%i)[%tx]
      %x = memref.load %row[%col] : memref<4095xf32>
      %e = math.exp %x : f32
      memref.store %e, %array[%i] : memref<16xf32>
    }
    %first = memref.load %array[%c0] : memref<16xf32>
    memref.store %first, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// Left alone: a count that may be 0 (nothing guaranteed), one that may differ by more than one iteration, a
// loop on the host.
// CHECK-LABEL: func.func @not_peeled
// CHECK-COUNT-2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NOT:     scf.if
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NOT:     scf.if
#maybe_none = affine_map<()[s0] -> ((-s0 + 300) floordiv 256)>
#wide = affine_map<()[s0] -> ((-s0 + 4350) floordiv 64)>
func.func @not_peeled(%row: memref<4095xf32>, %out: memref<256xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %few = affine.apply #maybe_none()[%tx]
    %a = scf.for %i = %c0 to %few step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %row[%i] : memref<4095xf32>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    %many = affine.apply #wide()[%tx]
    %b = scf.for %i = %c0 to %many step %c1 iter_args(%acc = %a) -> (f32) {
      %x = memref.load %row[%i] : memref<4095xf32>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    memref.store %b, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  %c0 = arith.constant 0 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %row[%i] : memref<4095xf32>
    memref.store %x, %out[%i] : memref<256xf32>
  }
  return
}
