// A padded 3x3 NCHW convolution over 13 channels (a prime: no thread's share of them but 1 divides them), 24
// filters, fp32.
func.func @conv_odd(%x: tensor<2x13x10x10xf32>, %w: tensor<24x13x3x3xf32>) -> tensor<2x24x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x13x10x10xf32> to tensor<2x13x12x12xf32>
  %empty = tensor.empty() : tensor<2x24x10x10xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x24x10x10xf32>) -> tensor<2x24x10x10xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<2x13x12x12xf32>, tensor<24x13x3x3xf32>) outs(%init : tensor<2x24x10x10xf32>) -> tensor<2x24x10x10xf32>
  return %conv : tensor<2x24x10x10xf32>
}
