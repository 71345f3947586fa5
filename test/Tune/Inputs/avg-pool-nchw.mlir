// nn.AvgPool2d(2) on 8 x 16 x 64 x 64, as torch-mlir imports it: a sum pooling into a fill, then a divide.
func.func @avg_pool(%x: tensor<8x16x64x64xf32>) -> tensor<8x16x32x32xf32> {
  %c = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<8x16x32x32xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %window : tensor<8x16x64x64xf32>, tensor<2x2xf32>) outs(%f : tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<8x16x32x32xf32>) outs(%e : tensor<8x16x32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %four : f32
    linalg.yield %d : f32
  } -> tensor<8x16x32x32xf32>
  return %y : tensor<8x16x32x32xf32>
}
