// 512x1024 @ 1024x512 in bf16, accumulated in fp32, rounded to bf16 once: the honest kernel.
func.func @kernel(%x: tensor<512x1024xbf16>, %w: tensor<1024x512xbf16>) -> tensor<512x512xbf16> {
  %zero = arith.constant 0.0 : f32
  %e32 = tensor.empty() : tensor<512x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e32 : tensor<512x512xf32>) -> tensor<512x512xf32>
  %acc = linalg.matmul ins(%x, %w : tensor<512x1024xbf16>, tensor<1024x512xbf16>) outs(%init : tensor<512x512xf32>) -> tensor<512x512xf32>
  %e = tensor.empty() : tensor<512x512xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<512x512xf32>) outs(%e : tensor<512x512xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<512x512xbf16>
  return %y : tensor<512x512xbf16>
}
