#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @k_a6867353fc1aab06(%arg0: tensor<65536x2048xf32>) -> tensor<65536x2048xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %0 = tensor.empty() : tensor<32x2048xf32>
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1]] : tensor<32x2048xf32> into tensor<65536xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<65536x2048xf32>) outs(%collapsed : tensor<65536xf32>) {
    ^bb0(%in: f32, %out: f32):
      %10 = arith.maximumf %in, %out : f32
      linalg.yield %10 : f32
    } -> tensor<65536xf32>
    %3 = tensor.empty() : tensor<32x2048x2048xf32>
    %collapsed_1 = tensor.collapse_shape %3 [[0, 1], [2]] : tensor<32x2048x2048xf32> into tensor<65536x2048xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2 : tensor<65536x2048xf32>, tensor<65536xf32>) outs(%collapsed_1 : tensor<65536x2048xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %10 = arith.subf %in, %in_4 : f32
      %11 = math.exp %10 : f32
      linalg.yield %11 : f32
    } -> tensor<65536x2048xf32>
    %5 = tensor.empty() : tensor<32x2048xf32>
    %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<32x2048xf32>) -> tensor<32x2048xf32>
    %collapsed_2 = tensor.collapse_shape %6 [[0, 1]] : tensor<32x2048xf32> into tensor<65536xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%4 : tensor<65536x2048xf32>) outs(%collapsed_2 : tensor<65536xf32>) {
    ^bb0(%in: f32, %out: f32):
      %10 = arith.addf %in, %out : f32
      linalg.yield %10 : f32
    } -> tensor<65536xf32>
    %8 = tensor.empty() : tensor<32x2048x2048xf32>
    %collapsed_3 = tensor.collapse_shape %8 [[0, 1], [2]] : tensor<32x2048x2048xf32> into tensor<65536x2048xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%4, %7 : tensor<65536x2048xf32>, tensor<65536xf32>) outs(%collapsed_3 : tensor<65536x2048xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %10 = arith.divf %in, %in_4 : f32
      linalg.yield %10 : f32
    } -> tensor<65536x2048xf32>
    return %9 : tensor<65536x2048xf32>
  }
}
