// nn.Conv2d(32, 64, 3, groups=4) as linalg's grouped convolution: 4 groups of 8 channels to 16 filters.
func.func @gconv(%x: tensor<2x4x8x18x18xf32>, %w: tensor<4x16x8x3x3xf32>) -> tensor<2x4x16x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x16x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x16x16x16xf32>) -> tensor<2x4x16x16x16xf32>
  %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x4x8x18x18xf32>, tensor<4x16x8x3x3xf32>) outs(%init : tensor<2x4x16x16x16xf32>) -> tensor<2x4x16x16x16xf32>
  return %y : tensor<2x4x16x16x16xf32>
}
