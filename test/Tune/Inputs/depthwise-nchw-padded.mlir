// A padded 3x3 depthwise convolution in NCHW, small (test/Tune/depthwise-order.test).
func.func @depthwise_padded(%x: tensor<2x3x8x8xf32>, %w: tensor<3x3x3xf32>) -> tensor<2x3x8x8xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c : f32
  } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
  %e = tensor.empty() : tensor<2x3x8x8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<2x3x10x10xf32>, tensor<3x3x3xf32>) outs(%f : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  return %r : tensor<2x3x8x8xf32>
}
