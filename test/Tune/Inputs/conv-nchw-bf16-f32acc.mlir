// nn.Conv2d(16, 32, 3, padding=1) on bf16 as torch-mlir writes it: the input zero-padded by tensor.pad, the named
// convolution extending bf16 to an f32 accumulator, then rounded to bf16. NCHW's input is contiguous along the
// output's width, its filter along the window, neither along the channels.
func.func @conv_nchw_bf16(%x: tensor<2x16x12x12xbf16>, %w: tensor<32x16x3x3xbf16>) -> tensor<2x32x12x12xbf16> {
  %zero = arith.constant 0.0 : f32
  %bzero = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %bzero : bf16
  } : tensor<2x16x12x12xbf16> to tensor<2x16x14x14xbf16>
  %empty = tensor.empty() : tensor<2x32x12x12xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x12x12xf32>) -> tensor<2x32x12x12xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<2x16x14x14xbf16>, tensor<32x16x3x3xbf16>) outs(%init : tensor<2x32x12x12xf32>) -> tensor<2x32x12x12xf32>
  %out = tensor.empty() : tensor<2x32x12x12xbf16>
  %round = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f, h, w)>],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<2x32x12x12xf32>) outs(%out : tensor<2x32x12x12xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x32x12x12xbf16>
  return %round : tensor<2x32x12x12xbf16>
}
