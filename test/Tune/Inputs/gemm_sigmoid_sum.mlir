#map_2d = affine_map<(i, j) -> (i, j)>
#map_col = affine_map<(i, j) -> (j)>
#map_row = affine_map<(i, j) -> (i)>
func.func @gemm_sigmoid_sum(%A: tensor<4096x4096xf32>, %B: tensor<4096x4096xf32>) -> tensor<4096xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4096x4096xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%init : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %empty_row = tensor.empty() : tensor<4096xf32>
  %s = linalg.generic {indexing_maps = [#map_2d, #map_2d], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<4096x4096xf32>) outs(%empty : tensor<4096x4096xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %a0 : f32
    %e = math.exp %neg : f32
    %d = arith.addf %one, %e : f32
    %v = arith.divf %one, %d : f32
    linalg.yield %v : f32
  } -> tensor<4096x4096xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%empty_row : tensor<4096xf32>) -> tensor<4096xf32>
  %r = linalg.generic {indexing_maps = [#map_2d, #map_row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4096x4096xf32>) outs(%sum_init : tensor<4096xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}
