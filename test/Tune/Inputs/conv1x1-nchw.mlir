// A 1x1 convolution in NCHW with a bias, as torch-mlir imports nn.Conv2d(256, 128, 1): 8 images of 64x64.
func.func @conv1x1(%x: tensor<8x256x64x64xf32>, %w: tensor<128x256x1x1xf32>, %bias: tensor<128xf32>) -> tensor<8x128x64x64xf32> {
  %e = tensor.empty() : tensor<8x128x64x64xf32>
  %b = linalg.broadcast ins(%bias : tensor<128xf32>) outs(%e : tensor<8x128x64x64xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<8x256x64x64xf32>, tensor<128x256x1x1xf32>) outs(%b : tensor<8x128x64x64xf32>) -> tensor<8x128x64x64xf32>
  return %y : tensor<8x128x64x64xf32>
}
