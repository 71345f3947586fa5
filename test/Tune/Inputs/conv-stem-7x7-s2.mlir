// A ResNet stem: nn.Conv2d(3, 64, 7, stride=2, padding=3) on 2 fp32 images of 64 x 64, as torch-mlir imports it
// (the padding as tensor.pad): K = 3 x 7 x 7 = 147, NCHW input, FCHW filter, NCHW output.
func.func @conv_stem(%X: tensor<2x3x64x64xf32>, %W: tensor<64x3x7x7xf32>) -> tensor<2x64x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %X low[0, 0, 3, 3] high[0, 0, 3, 3] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x3x64x64xf32> to tensor<2x3x70x70xf32>
  %empty = tensor.empty() : tensor<2x64x32x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x64x32x32xf32>) -> tensor<2x64x32x32xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%padded, %W : tensor<2x3x70x70xf32>, tensor<64x3x7x7xf32>) outs(%init : tensor<2x64x32x32xf32>) -> tensor<2x64x32x32xf32>
  return %r : tensor<2x64x32x32xf32>
}
