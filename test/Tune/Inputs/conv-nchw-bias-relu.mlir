// An nn.Conv2d(8, 32, 3, padding=1) + ReLU as torch-mlir writes it (NCHW, the input zero-padded by tensor.pad,
// the bias broadcast into the convolution's init), on a 2x8x16x16 input.
#map_out = affine_map<(n, f, h, w) -> (n, f, h, w)>
#map_bias = affine_map<(n, f, h, w) -> (f)>
func.func @conv_bias_relu(%x: tensor<2x8x16x16xf32>, %w: tensor<32x8x3x3xf32>, %bias: tensor<32xf32>) -> tensor<2x32x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x8x16x16xf32> to tensor<2x8x18x18xf32>
  %empty = tensor.empty() : tensor<2x32x16x16xf32>
  %init = linalg.generic {indexing_maps = [#map_bias, #map_out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<32xf32>) outs(%empty : tensor<2x32x16x16xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<2x32x16x16xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<2x8x18x18xf32>, tensor<32x8x3x3xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %relu = linalg.generic {indexing_maps = [#map_out, #map_out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<2x32x16x16xf32>) outs(%empty : tensor<2x32x16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x32x16x16xf32>
  return %relu : tensor<2x32x16x16xf32>
}
