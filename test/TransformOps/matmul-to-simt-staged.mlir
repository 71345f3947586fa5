// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// A block's 128x128 fp32 tile over a 16 x 16 thread grid, 8 of K per tile: two stages of A^T (rows padded to 132)
// and of B as workgroup attributions; each thread reads 2 + 2 four-wide rows of A^T and B per step of K and
// does 64 FMAs; the bias + relu epilogue applied to the accumulators, stored 4 columns at a time.
// CHECK-LABEL: func.func @block_tile
// CHECK: gpu.launch {{.*}} workgroup(%[[AS:.*]] : memref<2x8x132xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<2x8x128xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.alloc
// CHECK: gpu.thread_id x
// CHECK: vector.load %{{.*}} : memref<128x64xf32>, vector<4xf32>
// CHECK: memref.store %{{.*}}, %[[AS]]
// CHECK: vector.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK-COUNT-4: vector.load %[[AS]]
// CHECK-COUNT-64: math.fma
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}} : memref<128x128xf32>, vector<4xf32>
// CHECK-NOT: {{^ +}}linalg.
// CHECK: return

func.func @block_tile(%a: memref<128x64xf32>, %b: memref<64x128xf32>, %bias: memref<128xf32>, %out: memref<128x128xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    %c = memref.alloc() : memref<128x128xf32>
    linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
    linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c, %bias : memref<128x128xf32>, memref<128xf32>) outs(%out : memref<128x128xf32>) {
    ^bb0(%x: f32, %bb: f32, %o: f32):
      %s = arith.addf %x, %bb : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    }
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 16, 16>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// In place (the fp32 form after bufferization): C is the output's view, the bias add and the relu update it
// in place; both are applied in registers and C is written once.
// CHECK-LABEL: func.func @in_place_epilogue
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}} : memref<64x64xf32, strided<[256, 1], offset: ?>>, vector<4xf32>
// CHECK-NOT: {{^ +}}linalg.
// CHECK: return
func.func @in_place_epilogue(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %bias: memref<64xf32>,
                             %out: memref<256x256xf32>, %i: index, %j: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    %c = memref.subview %out[%i, %j] [64, 64] [1, 1] : memref<256x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>)
    linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c, %bias : memref<64x64xf32, strided<[256, 1], offset: ?>>, memref<64xf32>) outs(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%x: f32, %bb: f32, %o: f32):
      %s = arith.addf %x, %bb : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>) outs(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.maximumf %x, %zero : f32
      linalg.yield %r : f32
    }
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 8, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @bf16_operands(%a: memref<64x32xbf16>, %b: memref<32x64xbf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xbf16>, memref<32x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected f32 operands and result}}
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 8, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @grid_not_groups_of_four(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the thread grid 32x8 does not cut the 64x64 tile into shares of whole groups of 4 rows and 4 columns}}
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 32, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @outside_a_launch(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the matmul must be in a gpu.launch of 64x1x1 threads (the grid's)}}
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 8, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Threads that do not divide a tile's vectors (a 40x40 tile over a 5x5 grid: 25 threads, A's 40x8 tile is 80
// vectors, B's 8x40 is 80): each copy takes ceil(80 / 25) = 4 rounds and the last round's extra threads take
// the last vector (79) again, no branch.
// CHECK: #[[$LASTMAP:.*]] = affine_map<(d0) -> (d0 + 75, 79)>
// CHECK-LABEL: func.func @threads_not_dividing_the_copy
// CHECK: gpu.launch
// CHECK-COUNT-3: vector.load %{{.*}} : memref<40x16xf32>, vector<4xf32>
// CHECK: affine.min #[[$LASTMAP]](%{{.*}})
// CHECK: vector.load %{{.*}} : memref<40x16xf32>, vector<4xf32>
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK-COUNT-64: math.fma
// CHECK: vector.store %{{.*}} : memref<40x40xf32>, vector<4xf32>
func.func @threads_not_dividing_the_copy(%a: memref<40x16xf32>, %b: memref<16x40xf32>, %c: memref<40x40xf32>) {
  %c1 = arith.constant 1 : index
  %c25 = arith.constant 25 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c25, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%c : memref<40x40xf32>)
    linalg.matmul ins(%a, %b : memref<40x16xf32>, memref<16x40xf32>) outs(%c : memref<40x40xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 5, 5>} : (!transform.any_op) -> ()
    transform.yield
  }
}
