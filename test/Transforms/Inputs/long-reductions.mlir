// A whole-array sum of squares and a row maximum, both with few results over long rows: what
// kforge-split-naive-reductions splits before the naive GPU mapping.
func.func @long_reductions(%x: tensor<262144xf32>, %y: tensor<8x131072xf32>) -> (tensor<f32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<262144xf32>) outs(%s0 : tensor<f32>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%lowest : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.reduce ins(%y : tensor<8x131072xf32>) outs(%m0 : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %sum, %max : tensor<f32>, tensor<8xf32>
}
