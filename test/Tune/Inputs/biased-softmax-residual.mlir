// softmax(x * 0.125 + bias) + residual over 1024 x 4096 fp32: an elementwise producer (scale and a per-column
// bias) before the row reductions and an elementwise consumer (a residual add) after them.
#map_2d = affine_map<(i, j) -> (i, j)>
#map_row = affine_map<(i, j) -> (i)>
#map_col = affine_map<(i, j) -> (j)>
func.func @biased_softmax_residual(%X: tensor<1024x4096xf32>, %bias: tensor<4096xf32>, %R: tensor<1024x4096xf32>) -> tensor<1024x4096xf32> {
  %neg_inf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %empty_row = tensor.empty() : tensor<1024xf32>
  %empty = tensor.empty() : tensor<1024x4096xf32>
  %z = linalg.generic {indexing_maps = [#map_2d, #map_col, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%X, %bias : tensor<1024x4096xf32>, tensor<4096xf32>) outs(%empty : tensor<1024x4096xf32>) {
  ^bb0(%x: f32, %b: f32, %out: f32):
    %s = arith.mulf %x, %scale : f32
    %v = arith.addf %s, %b : f32
    linalg.yield %v : f32
  } -> tensor<1024x4096xf32>
  %max_init = linalg.fill ins(%neg_inf : f32) outs(%empty_row : tensor<1024xf32>) -> tensor<1024xf32>
  %max = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<1024x4096xf32>) outs(%max_init : tensor<1024xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  %exp = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%z, %max : tensor<1024x4096xf32>, tensor<1024xf32>) outs(%empty : tensor<1024x4096xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<1024x4096xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%empty_row : tensor<1024xf32>) -> tensor<1024xf32>
  %sum = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<1024x4096xf32>) outs(%sum_init : tensor<1024xf32>) {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#map_2d, #map_row, #map_2d, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum, %R : tensor<1024x4096xf32>, tensor<1024xf32>, tensor<1024x4096xf32>) outs(%empty : tensor<1024x4096xf32>) {
  ^bb0(%e: f32, %s: f32, %r: f32, %out: f32):
    %q = arith.divf %e, %s : f32
    %o = arith.addf %q, %r : f32
    linalg.yield %o : f32
  } -> tensor<1024x4096xf32>
  return %y : tensor<1024x4096xf32>
}
