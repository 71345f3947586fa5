// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics
// transform.kforge.implicit_gemm_to_mma_sync refuses what it cannot compute on tensor cores, with the reason,
// leaving the IR as it was; and its options are checked when the script is verified. (What it makes is checked in
// test/Tune/implicit-gemm-mma.test.)

// f32 multiplicands: the SIMT implicit GEMM's (implicit_gemm_to_simt_staged), not tensor cores'.
func.func @f32(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %c: memref<32x32xf32>) {
  linalg.matmul ins(%a, %b : memref<32x32xf32>, memref<32x32xf32>) outs(%c : memref<32x32xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected bf16 or f16 multiplicands (both the same, as read or extended to f32 in the body) and an f32 output}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 16, warp_grid = array<i64: 1, 1>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// bf16 accumulating in bf16: mma.sync accumulates in f32.
func.func @bf16_accumulator(%a: memref<32x32xbf16>, %b: memref<32x32xbf16>, %c: memref<32x32xbf16>) {
  linalg.matmul ins(%a, %b : memref<32x32xbf16>, memref<32x32xbf16>) outs(%c : memref<32x32xbf16>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected bf16 or f16 multiplicands (both the same, as read or extended to f32 in the body) and an f32 output}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 16, warp_grid = array<i64: 1, 1>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// K is 16: block_k 32 is above it rounded up to 16.
func.func @block_k_above_k(%a: memref<32x16xbf16>, %b: memref<16x32xbf16>, %c: memref<32x32xf32>) {
  linalg.matmul ins(%a, %b : memref<32x16xbf16>, memref<16x32xbf16>) outs(%c : memref<32x32xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{block_k (32) is above K (16) rounded up to 16}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 32, warp_grid = array<i64: 1, 1>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Not in a launch of the grid's 32 x 2 x 2 threads.
func.func @no_launch(%a: memref<32x32xbf16>, %b: memref<32x32xbf16>, %c: memref<32x32xf32>) {
  linalg.matmul ins(%a, %b : memref<32x32xbf16>, memref<32x32xbf16>) outs(%c : memref<32x32xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{the op must be in a gpu.launch of 128x1x1 threads (the grid's)}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 16, warp_grid = array<i64: 2, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{block_k (24) must be a positive multiple of 16}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 24, warp_grid = array<i64: 2, 2>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected warp_grid = [rows, columns] of warps, at most 32 in all}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 16, warp_grid = array<i64: 8, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{stages (9) must be 2 to 8}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 16, warp_grid = array<i64: 2, 2>, stages = 9} : (!transform.any_op) -> ()
    transform.yield
  }
}
