#map_id = affine_map<(i, j) -> (i, j)>
func.func @mm_2048_3072_1000(%A: tensor<2048x1000xbf16>, %B: tensor<1000x3072xbf16>) -> tensor<2048x3072xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2048x3072xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2048x3072xf32>) -> tensor<2048x3072xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<2048x1000xbf16>, tensor<1000x3072xbf16>) outs(%init : tensor<2048x3072xf32>) -> tensor<2048x3072xf32>
  %out_bf16 = tensor.empty() : tensor<2048x3072xbf16>
  %y = linalg.generic {indexing_maps = [#map_id, #map_id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2048x3072xf32>) outs(%out_bf16 : tensor<2048x3072xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2048x3072xbf16>
  return %y : tensor<2048x3072xbf16>
}
