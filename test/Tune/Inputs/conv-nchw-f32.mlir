// nn.Conv2d(32, 64, 3, padding=1) on 2 fp32 images of 16 x 16, as torch-mlir imports it (the padding as
// tensor.pad): NCHW input, FCHW filter, NCHW output.
func.func @conv_nchw_f32(%x: tensor<2x32x16x16xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<2x64x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x32x16x16xf32> to tensor<2x32x18x18xf32>
  %empty = tensor.empty() : tensor<2x64x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x64x16x16xf32>) -> tensor<2x64x16x16xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<2x32x18x18xf32>, tensor<64x32x3x3xf32>) outs(%init : tensor<2x64x16x16xf32>) -> tensor<2x64x16x16xf32>
  return %conv : tensor<2x64x16x16xf32>
}
