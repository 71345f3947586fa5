// Row softmax over 1024 x 50257 fp32 (a GPT-2 vocabulary: a width no warp multiple divides), decomposed as importers do.
#map_2d = affine_map<(i, j) -> (i, j)>
#map_row = affine_map<(i, j) -> (i)>
func.func @softmax(%X: tensor<1024x50257xf32>) -> tensor<1024x50257xf32> {
  %neg_inf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %empty_row = tensor.empty() : tensor<1024xf32>
  %empty = tensor.empty() : tensor<1024x50257xf32>
  %max_init = linalg.fill ins(%neg_inf : f32) outs(%empty_row : tensor<1024xf32>) -> tensor<1024xf32>
  %max = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%X : tensor<1024x50257xf32>) outs(%max_init : tensor<1024xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  %exp = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%X, %max : tensor<1024x50257xf32>, tensor<1024xf32>) outs(%empty : tensor<1024x50257xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<1024x50257xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%empty_row : tensor<1024xf32>) -> tensor<1024xf32>
  %sum = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<1024x50257xf32>) outs(%sum_init : tensor<1024xf32>) {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<1024x50257xf32>, tensor<1024xf32>) outs(%empty : tensor<1024x50257xf32>) {
  ^bb0(%e: f32, %s: f32, %out: f32):
    %q = arith.divf %e, %s : f32
    linalg.yield %q : f32
  } -> tensor<1024x50257xf32>
  return %y : tensor<1024x50257xf32>
}
