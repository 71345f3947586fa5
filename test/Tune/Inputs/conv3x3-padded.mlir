// nn.Conv2d(16, 32, 3, padding=1) on 4 images of 64x64 with a bias, as torch-mlir imports it: the padding as
// tensor.pad, the bias broadcast as the convolution's init.
func.func @conv3x3(%x: tensor<4x16x64x64xf32>, %w: tensor<32x16x3x3xf32>, %bias: tensor<32xf32>) -> tensor<4x32x64x64xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c : f32
  } : tensor<4x16x64x64xf32> to tensor<4x16x66x66xf32>
  %e = tensor.empty() : tensor<4x32x64x64xf32>
  %b = linalg.broadcast ins(%bias : tensor<32xf32>) outs(%e : tensor<4x32x64x64xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<4x16x66x66xf32>, tensor<32x16x3x3xf32>) outs(%b : tensor<4x32x64x64xf32>) -> tensor<4x32x64x64xf32>
  return %y : tensor<4x32x64x64xf32>
}
