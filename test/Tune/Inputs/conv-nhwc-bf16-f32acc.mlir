// A 3x3 NHWC convolution of bf16 accumulated in f32, padding 1, rounded to bf16 (an importer's bf16 convolution:
// the named op extends its operands to f32 in its body): its implicit GEMM can run on tensor cores.
func.func @conv_nhwc_bf16(%x: tensor<2x16x16x32xbf16>, %w: tensor<3x3x32x64xbf16>) -> tensor<2x16x16x64xbf16> {
  %zero = arith.constant 0.0 : f32
  %bzero = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %bzero : bf16
  } : tensor<2x16x16x32xbf16> to tensor<2x18x18x32xbf16>
  %empty = tensor.empty() : tensor<2x16x16x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<2x18x18x32xbf16>, tensor<3x3x32x64xbf16>) outs(%init : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  %out = tensor.empty() : tensor<2x16x16x64xbf16>
  %round = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<2x16x16x64xf32>) outs(%out : tensor<2x16x16x64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x16x16x64xbf16>
  return %round : tensor<2x16x16x64xbf16>
}
