// nn.Conv2d(8, 16, 3) then nn.MaxPool2d(2) on 2 images of 34x34, as torch-mlir imports it: a pooling that reads
// a convolution's result, each window of it once.
func.func @conv_pool(%x: tensor<2x8x34x34xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x16x32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x8x34x34xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x16x16x16xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%y, %window : tensor<2x16x32x32xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  return %p : tensor<2x16x16x16xf32>
}
