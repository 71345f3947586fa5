// A padded 3x3 depthwise convolution in NCHW (linalg's loops: n, oh, ow, c; its output: n, c, oh, ow).
func.func @depthwise_nchw(%x: tensor<4x32x28x28xf32>, %w: tensor<32x3x3xf32>) -> tensor<4x32x28x28xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c : f32
  } : tensor<4x32x28x28xf32> to tensor<4x32x30x30xf32>
  %e = tensor.empty() : tensor<4x32x28x28xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<4x32x28x28xf32>) -> tensor<4x32x28x28xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<4x32x30x30xf32>, tensor<32x3x3xf32>) outs(%f : tensor<4x32x28x28xf32>) -> tensor<4x32x28x28xf32>
  return %r : tensor<4x32x28x28xf32>
}
