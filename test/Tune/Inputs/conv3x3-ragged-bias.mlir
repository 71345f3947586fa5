// nn.Conv2d(8, 16, 3) with a bias, then relu, on 2 images of 40x40, as torch-mlir imports it: the output is
// 38 wide, which no tile of 16 or more divides, so the block tiles' last column is partial, and the bias
// broadcast fused into each thread's tile has a size of 0 or 1 that is only known at run time.
func.func @conv_ragged(%x: tensor<2x8x40x40xf32>, %w: tensor<16x8x3x3xf32>, %bias: tensor<16xf32>) -> tensor<2x16x38x38xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x38x38xf32>
  %b = linalg.broadcast ins(%bias : tensor<16xf32>) outs(%e : tensor<2x16x38x38xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x8x40x40xf32>, tensor<16x8x3x3xf32>) outs(%b : tensor<2x16x38x38xf32>) -> tensor<2x16x38x38xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<2x16x38x38xf32>) outs(%e : tensor<2x16x38x38xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf ugt, %in, %zero : f32
    %s = arith.select %p, %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<2x16x38x38xf32>
  return %r : tensor<2x16x38x38xf32>
}
