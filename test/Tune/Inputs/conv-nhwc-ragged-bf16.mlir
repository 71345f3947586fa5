// A 3x3 NHWC bf16 convolution whose output (13 x 13, 40 filters) no power-of-two tile divides.
func.func @conv_ragged(%x: tensor<2x15x15x32xbf16>, %w: tensor<3x3x32x40xbf16>) -> tensor<2x13x13x40xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x13x13x40xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x13x13x40xf32>) -> tensor<2x13x13x40xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x15x15x32xbf16>, tensor<3x3x32x40xbf16>) outs(%init : tensor<2x13x13x40xf32>) -> tensor<2x13x13x40xf32>
  %out = tensor.empty() : tensor<2x13x13x40xbf16>
  %round = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<2x13x13x40xf32>) outs(%out : tensor<2x13x13x40xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x13x13x40xbf16>
  return %round : tensor<2x13x13x40xbf16>
}
