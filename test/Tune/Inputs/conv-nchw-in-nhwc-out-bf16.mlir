// A 3x3 convolution reading an NCHW input and writing an NHWC output (filters innermost): the implicit GEMM's A
// (the input) is contiguous along an M loop (the output's width), so its stage is [k][m], read by ldmatrix.trans.
func.func @conv_mixed(%x: tensor<2x32x18x18xbf16>, %w: tensor<64x32x3x3xbf16>) -> tensor<2x16x16x64xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x16x16x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  %conv = linalg.generic {indexing_maps = [affine_map<(n, h, w, f, c, kh, kw) -> (n, c, h + kh, w + kw)>,
                                           affine_map<(n, h, w, f, c, kh, kw) -> (f, c, kh, kw)>,
                                           affine_map<(n, h, w, f, c, kh, kw) -> (n, h, w, f)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<2x32x18x18xbf16>, tensor<64x32x3x3xbf16>) outs(%init : tensor<2x16x16x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x16x16x64xf32>
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
