// Z = relu(X + b) over 257 x 1000 (fp32): no power-of-two tile divides either loop.
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @bias_relu(%X: tensor<257x1000xf32>, %b: tensor<1000xf32>) -> tensor<257x1000xf32> {
  %empty = tensor.empty() : tensor<257x1000xf32>
  %z = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%X, %b : tensor<257x1000xf32>, tensor<1000xf32>) outs(%empty : tensor<257x1000xf32>) {
  ^bb0(%x: f32, %bb: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %s = arith.addf %x, %bb : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<257x1000xf32>
  return %z : tensor<257x1000xf32>
}
