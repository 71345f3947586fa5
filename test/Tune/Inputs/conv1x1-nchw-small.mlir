// A 1x1 convolution in NCHW with a bias, as torch-mlir imports nn.Conv2d(24, 20, 1): 2 images of 6x6 (small, for the CPU).
func.func @conv1x1(%x: tensor<2x24x6x6xf32>, %w: tensor<20x24x1x1xf32>, %bias: tensor<20xf32>) -> tensor<2x20x6x6xf32> {
  %e = tensor.empty() : tensor<2x20x6x6xf32>
  %b = linalg.broadcast ins(%bias : tensor<20xf32>) outs(%e : tensor<2x20x6x6xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x24x6x6xf32>, tensor<20x24x1x1xf32>) outs(%b : tensor<2x20x6x6xf32>) -> tensor<2x20x6x6xf32>
  return %y : tensor<2x20x6x6xf32>
}
