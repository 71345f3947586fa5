// examples/gemm.mlir with B read as N x K (a linalg.matmul whose indexing maps transpose B): what swap_ab's
// transform op refuses (test/Tune/tf32-swap-ab.test).
func.func @gemm(%A: tensor<4096x4096xf32>, %B: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4096x4096xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %C = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
                     ins(%A, %B : tensor<4096x4096xf32>, tensor<4096x4096xf32>)
                     outs(%init : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %C : tensor<4096x4096xf32>
}
