// Right but for a relative error of 1e-3 (as a lower-precision computation would be).
#id = affine_map<(i, j) -> (i, j)>
func.func @kernel(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x64xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<64x64xf32>) outs(%e2 : tensor<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %f = arith.constant 1.001 : f32
    %r = arith.mulf %v, %f : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  return %z : tensor<64x64xf32>
}
