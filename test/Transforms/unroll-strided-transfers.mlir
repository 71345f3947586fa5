// RUN: kforge-opt %s -kforge-unroll-strided-transfers -split-input-file | FileCheck %s
// RUN: kforge-opt %s -kforge-unroll-strided-transfers=max-elements=2 -split-input-file | FileCheck %s --check-prefix=SMALL

// A lane's cyclic slice of a row (stride 32): four scalar loads at static vector positions, four extracts and
// scalar stores; nothing left for upstream's loop over a stack copy.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: vector.transfer_read
// CHECK: %[[A:.*]] = memref.load %{{.*}}[%{{.*}}, %[[J:.*]]] : memref<1x4xf32, strided<[4096, 32], offset: ?>>
// CHECK: %[[J1:.*]] = arith.addi %[[J]], %c1
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[J1]]]
// CHECK: arith.addi %[[J]], %c2
// CHECK: arith.addi %[[J]], %c3
// CHECK: %[[V:.*]] = vector.from_elements %[[A]], %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: %[[E:.*]] = math.exp %[[V]]
// CHECK: vector.extract %[[E]][0]
// CHECK: memref.store
// CHECK: vector.extract %[[E]][3]
// CHECK: memref.store
// CHECK-NOT: vector.transfer_write
// SMALL-LABEL: func.func @strided
// SMALL: vector.transfer_read
// SMALL: vector.transfer_write
func.func @strided(%in: memref<1x4xf32, strided<[4096, 32], offset: ?>>, %out: memref<1x4xf32, strided<[4096, 32], offset: ?>>, %i: index, %j: index) {
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%i, %j], %pad {in_bounds = [true]} : memref<1x4xf32, strided<[4096, 32], offset: ?>>, vector<4xf32>
  %e = math.exp %v : vector<4xf32>
  vector.transfer_write %e, %out[%i, %j] {in_bounds = [true]} : vector<4xf32>, memref<1x4xf32, strided<[4096, 32], offset: ?>>
  return
}

// -----

// Contiguous, possibly out of bounds, masked or transposed transfers are left to upstream's lowering.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: vector.transfer_read
// CHECK-NOT: memref.load
func.func @left_alone(%contiguous: memref<8xf32>, %strided: memref<8xf32, strided<[2]>>, %m: memref<4x4xf32, strided<[1, 4]>>, %mask: vector<4xi1>, %i: index) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
  %pad = arith.constant 0.0 : f32
  %a = vector.transfer_read %contiguous[%i], %pad {in_bounds = [true]} : memref<8xf32>, vector<4xf32>
  %b = vector.transfer_read %strided[%i], %pad : memref<8xf32, strided<[2]>>, vector<4xf32>
  %c = vector.transfer_read %strided[%i], %pad, %mask {in_bounds = [true]} : memref<8xf32, strided<[2]>>, vector<4xf32>
  %d = vector.transfer_read %m[%i, %i], %pad {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<4x4xf32, strided<[1, 4]>>, vector<4xf32>
  return %a, %b, %c, %d : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>
}

// -----

// A 0-D transfer (a lane that owns one column group of a row: vector<f32>) becomes one scalar load and one
// scalar store; upstream's vector lowerings leave it as a transfer (whatever its layout), and its index
// operands then reach the LLVM translation as an unresolved cast.
// CHECK-LABEL: func.func @zero_d
// CHECK-NOT: vector.transfer_read
// CHECK: %[[A:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<1x1xf32, strided<[4096, 4096], offset: ?>>
// CHECK: %[[V:.*]] = vector.from_elements %[[A]] : vector<f32>
// CHECK: %[[E:.*]] = math.exp %[[V]]
// CHECK: %[[S:.*]] = vector.extract %[[E]][] : f32 from vector<f32>
// CHECK: memref.store %[[S]], %{{.*}}[%{{.*}}, %{{.*}}] : memref<1x1xf32
// CHECK-NOT: vector.transfer_write
// SMALL-LABEL: func.func @zero_d
// SMALL-NOT: vector.transfer_read
func.func @zero_d(%in: memref<1x1xf32, strided<[4096, 4096], offset: ?>>, %out: memref<1x1xf32, strided<[4096, 4096], offset: ?>>, %i: index, %j: index) {
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%i, %j], %pad : memref<1x1xf32, strided<[4096, 4096], offset: ?>>, vector<f32>
  %e = math.exp %v : vector<f32>
  vector.transfer_write %e, %out[%i, %j] : vector<f32>, memref<1x1xf32, strided<[4096, 4096], offset: ?>>
  return
}
