// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics
// transform.kforge.implicit_gemm_to_simt_staged refuses what it cannot compute as an implicit GEMM, with the
// reason, leaving the IR as it was; and its options are checked when the script is verified.

func.func @not_bufferized(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected a linalg op on memrefs (after bufferization)}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 4, thread_grid = array<i64: 2, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A batch (loop 0, read by both sides) two wide in the block: one position at a time, or serially.
func.func @batch(%a: memref<2x8x8xf32>, %b: memref<2x8x8xf32>, %c: memref<2x8x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x8xf32>, memref<2x8x8xf32>) outs(%c : memref<2x8x8xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.batch_matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{loop 0 (2 wide) is read by both multiplicands or by neither: tile it by 1 or walk it serially (serial_loops)}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 4, thread_grid = array<i64: 2, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Walked serially, the batch is fine until the launch: the op is in none.
func.func @no_launch(%a: memref<2x8x8xf32>, %b: memref<2x8x8xf32>, %c: memref<2x8x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x8xf32>, memref<2x8x8xf32>) outs(%c : memref<2x8x8xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.batch_matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the op must be in a gpu.launch of 4x1x1 threads (the grid's): its threads copy the tiles to shared memory together}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 4, thread_grid = array<i64: 2, 2>, serial_loops = array<i64: 0>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Walking every row loop serially leaves no GEMM.
func.func @all_serial(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{serial_loops leaves the GEMM no row (M) loop}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 4, thread_grid = array<i64: 2, 2>, serial_loops = array<i64: 0>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A multiplicand computed from a read (x * 2) is no element read: no cp.async copy gives it.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @computed(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %x2 = arith.mulf %x, %two : f32
    %p = arith.mulf %x2, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{async_copies: each multiplicand must be an element read of a memref (or select(c, read, 0.0)); this op computes one}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 4, thread_grid = array<i64: 2, 2>, async_copies} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A body other than out + x * y (a sum of products is; a running maximum is not).
#mk = affine_map<(m, n, k) -> (m, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @max(%a: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#mk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.maximumf %o, %x : f32
    linalg.yield %s : f32
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the body is not out + x * y}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 4, thread_grid = array<i64: 2, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected thread_grid = [rows, columns] of threads}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 8, thread_grid = array<i64: 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{block_k (6) must be a positive multiple of 4}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 6, thread_grid = array<i64: 8, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{copy_order must be k_groups, contiguous or contiguous_longest_k, not 'rows'}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 8, thread_grid = array<i64: 8, 8>, async_copies, copy_order = "rows"} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{copy_order 'contiguous' orders asynchronous copies: it needs async_copies}}
    transform.kforge.implicit_gemm_to_simt_staged %op {block_k = 8, thread_grid = array<i64: 8, 8>, copy_order = "contiguous"} : (!transform.any_op) -> ()
    transform.yield
  }
}
