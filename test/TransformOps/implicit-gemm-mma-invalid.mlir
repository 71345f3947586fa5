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

// -----

// One tile's wgmma in flight needs wgmma; and it is 0 or 1.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma_in_flight (1) must be 0, or 1 with wgmma}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 64, warp_grid = array<i64: 4, 1>, wgmma_in_flight = 1} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma_in_flight (2) must be 0, or 1 with wgmma}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 64, warp_grid = array<i64: 4, 1>, wgmma, wgmma_in_flight = 2} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// wgmma reads one 128-byte swizzled row of K per tile: block_k 64.
func.func @wgmma_block_k(%a: memref<64x128xbf16>, %b: memref<128x64xbf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x128xbf16>, memref<128x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma takes block_k = 64 (one 128-byte swizzled row of 16-bit elements of K per tile), not 32}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 32, warp_grid = array<i64: 4, 1>, wgmma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A warpgroup is 4 warps of 16 rows: warp_grid's rows a multiple of 4.
func.func @wgmma_warp_rows(%a: memref<64x128xbf16>, %b: memref<128x64xbf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x128xbf16>, memref<128x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma takes warp_grid = [4 x warpgroup rows, warpgroup columns] (a warpgroup is 4 warps of 16 rows), not [2, 2]}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 64, warp_grid = array<i64: 2, 2>, wgmma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// 128 rows on one warpgroup (64 rows), and 512 columns past one instruction's N (256).
func.func @wgmma_rows(%a: memref<128x128xbf16>, %b: memref<128x64xbf16>, %c: memref<128x64xf32>) {
  linalg.matmul ins(%a, %b : memref<128x128xbf16>, memref<128x64xbf16>) outs(%c : memref<128x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{wgmma: the block's 128 rows must fit its warpgroups' 64 (64 each)}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 64, warp_grid = array<i64: 4, 1>, wgmma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @wgmma_columns(%a: memref<64x128xbf16>, %b: memref<128x512xbf16>, %c: memref<64x512xf32>) {
  linalg.matmul ins(%a, %b : memref<64x128xbf16>, memref<128x512xbf16>) outs(%c : memref<64x512xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{and its 512 columns (padded to 512) over 1 warpgroup columns one instruction's N each, at most 256}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 64, warp_grid = array<i64: 4, 1>, wgmma} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// tf32: wgmma's alone (the mma.sync path multiplies 16-bit floats).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{tf32 takes wgmma (the mma.sync path multiplies 16-bit floats)}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 32, warp_grid = array<i64: 4, 1>, tf32} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// tf32 multiplies f32, not bf16.
func.func @tf32_bf16(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{tf32 multiplies f32 multiplicands into an f32 output}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 32, warp_grid = array<i64: 4, 1>, wgmma, tf32} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// tf32 on wgmma reads both multiplicands K-major: B stored K x N (contiguous along N) is not.
func.func @tf32_b_along_n(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{tf32 on wgmma reads both multiplicands K-major (its .tf32 form has no transpose)}}
    transform.kforge.implicit_gemm_to_mma_sync %op {block_k = 32, warp_grid = array<i64: 4, 1>, wgmma, tf32} : (!transform.any_op) -> ()
    transform.yield
  }
}
