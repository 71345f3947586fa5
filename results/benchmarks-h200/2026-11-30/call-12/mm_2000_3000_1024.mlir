#map_id = affine_map<(i, j) -> (i, j)>
func.func @mm_2000_3000_1024(%A: tensor<2000x1024xbf16>, %B: tensor<1024x3000xbf16>) -> tensor<2000x3000xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2000x3000xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2000x3000xf32>) -> tensor<2000x3000xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<2000x1024xbf16>, tensor<1024x3000xbf16>) outs(%init : tensor<2000x3000xf32>) -> tensor<2000x3000xf32>
  %out_bf16 = tensor.empty() : tensor<2000x3000xbf16>
  %y = linalg.generic {indexing_maps = [#map_id, #map_id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2000x3000xf32>) outs(%out_bf16 : tensor<2000x3000xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2000x3000xbf16>
  return %y : tensor<2000x3000xbf16>
}
