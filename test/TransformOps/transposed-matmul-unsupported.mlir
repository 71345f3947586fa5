// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics

// nn.Linear's matmul after kforge-normalize-importer reads B transposed (N x K) through its map. The staged
// and tensor-core rewrites read B as K x N: they refuse it (on the H200 the staged kernel of such a matmul
// left most of C unwritten before this check).
func.func @transposed_b_staged(%a: memref<64x32xf32>, %b: memref<64x32xf32>, %c: memref<64x64xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<64x32xf32>, memref<64x32xf32>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected a linalg.matmul with the default indexing maps (A as M x K, B as K x N); a transposed operand is not supported here}}
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 8, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

func.func @transposed_b_mma(%a: memref<64x32xbf16>, %b: memref<64x32xbf16>, %c: memref<64x64xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<64x32xbf16>, memref<64x32xbf16>) outs(%c : memref<64x64xf32>)
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{a transposed operand is not supported here}}
    transform.kforge.matmul_to_mma_sync %mm {k_steps = 1} : (!transform.any_op) -> ()
    transform.yield
  }
}
