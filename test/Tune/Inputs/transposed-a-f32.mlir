// C = A^T B in f32 (TF32 allowed), A stored as K x M (x.T @ w in forward): 1024 x 2048, K = 512.
func.func @at_b(%a: tensor<512x1024xf32>, %b: tensor<512x2048xf32>) -> tensor<1024x2048xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x2048xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1024x2048xf32>) -> tensor<1024x2048xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<512x1024xf32>, tensor<512x2048xf32>) outs(%f : tensor<1024x2048xf32>) -> tensor<1024x2048xf32>
  return %r : tensor<1024x2048xf32>
}
