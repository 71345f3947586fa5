// nn.Conv2d(3, 4, 3, padding=1) on 2 images of 6x6 (small, for the CPU) with a bias, as torch-mlir imports it: the padding as
// tensor.pad, the bias broadcast as the convolution's init.
func.func @conv3x3(%x: tensor<2x3x6x6xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>) -> tensor<2x4x6x6xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c : f32
  } : tensor<2x3x6x6xf32> to tensor<2x3x8x8xf32>
  %e = tensor.empty() : tensor<2x4x6x6xf32>
  %b = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%e : tensor<2x4x6x6xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%b : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}
