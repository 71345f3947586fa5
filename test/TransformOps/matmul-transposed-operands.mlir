// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// nn.Linear's matmul after kforge-normalize-importer reads B transposed (N x K) through its map. The staged
// SIMT rewrite reads B^T's tile along its contiguous K rows (4-wide global loads) and stores it transposed into
// a K-major stage padded to 68 floats, so the multiply reads the same stages as for B as K x N. (Before, the
// rewrite read B as K x N whatever its map: on the H200 such a kernel left most of C unwritten.)
// CHECK-LABEL: func.func @transposed_b_staged
// CHECK: workgroup(%[[AS:.*]] : memref<2x8x68xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<2x8x68xf32, #gpu.address_space<workgroup>>)
// CHECK: vector.load %{{.*}} : memref<64x32xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} : memref<64x32xf32>, vector<4xf32>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[AS]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[BS]]
// CHECK-NOT: vector.store %{{.*}}, %[[BS]]
// CHECK: scf.for
// CHECK-COUNT-2: vector.load %[[AS]]
// CHECK: vector.load %[[BS]]
// CHECK: math.fma
func.func @transposed_b_staged(%a: memref<64x32xf32>, %b: memref<64x32xf32>, %c: memref<64x64xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : memref<64x32xf32>, memref<64x32xf32>) outs(%c : memref<64x64xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 16, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A transposed (K x M, a .T of the left operand in forward): its tile is read along M and stored into the
// K-major stage as it is (an unpadded 2x8x64 stage, vector stores); B as K x N as before.
// CHECK-LABEL: func.func @transposed_a_staged
// CHECK: workgroup(%[[AS:.*]] : memref<2x8x64xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<2x8x64xf32, #gpu.address_space<workgroup>>)
// CHECK: vector.load %{{.*}} : memref<32x64xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} : memref<32x64xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[AS]]
// CHECK: vector.store %{{.*}}, %[[BS]]
// CHECK-NOT: memref.store %{{.*}}, %[[AS]]
// CHECK: scf.for
func.func @transposed_a_staged(%a: memref<32x64xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : memref<32x64xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 16, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// B's cp.async copies move rows as they are: with B transposed, async_b is refused.
func.func @transposed_b_async(%a: memref<64x32xf32>, %b: memref<64x32xf32>, %c: memref<64x64xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : memref<64x32xf32>, memref<64x32xf32>) outs(%c : memref<64x64xf32>)
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{async_b copies B's rows into shared memory as they are; B comes transposed (N x K)}}
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 16, 8>, async_b} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// The tensor-core rewrite takes B as N x K (staged as A is, test/Tune/transposed-operands.test); mma.sync
// reads A as M x K: a transposed A is refused without wgmma, naming the paths that take it
// (test/Tune/transposed-a-wgmma.test).
func.func @transposed_a_mma(%a: memref<32x64xbf16>, %b: memref<32x64xbf16>, %c: memref<64x64xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<32x64xbf16>, memref<32x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the mma.sync rewrite reads A as M x K; A is transposed (K x M): use wgmma (which reads A M-major), the staged SIMT rewrite or the tiled and vectorized loops}}
    transform.kforge.matmul_to_mma_sync %mm {k_steps = 1} : (!transform.any_op) -> ()
    transform.yield
  }
}
