// 64x1024 @ 1024x64 in fp16 accumulated in fp32 and rounded to fp16 once: the honest kernel.
func.func @kernel(%x: tensor<64x1024xf16>, %w: tensor<1024x64xf16>) -> tensor<64x64xf16> {
  %zero = arith.constant 0.0 : f32
  %e32 = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e32 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %acc = linalg.matmul ins(%x, %w : tensor<64x1024xf16>, tensor<1024x64xf16>) outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<64x64xf32>) outs(%e : tensor<64x64xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<64x64xf16>
  return %y : tensor<64x64xf16>
}
