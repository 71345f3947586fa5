// softmax over rows of 393216 (too long for a block's registers even over 1024 lanes)
#map_2d = affine_map<(i, j) -> (i, j)>
#map_row = affine_map<(i, j) -> (i)>
func.func @softmax(%X: tensor<64x393216xf32>) -> tensor<64x393216xf32> {
  %neg_inf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %empty_row = tensor.empty() : tensor<64xf32>
  %empty = tensor.empty() : tensor<64x393216xf32>
  %max_init = linalg.fill ins(%neg_inf : f32) outs(%empty_row : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%X : tensor<64x393216xf32>) outs(%max_init : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %e = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%X, %max : tensor<64x393216xf32>, tensor<64xf32>) outs(%empty : tensor<64x393216xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %d = arith.subf %a0, %a1 : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<64x393216xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%empty_row : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<64x393216xf32>) outs(%sum_init : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<64x393216xf32>, tensor<64xf32>) outs(%empty : tensor<64x393216xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %v = arith.divf %a0, %a1 : f32
    linalg.yield %v : f32
  } -> tensor<64x393216xf32>
  return %y : tensor<64x393216xf32>
}
