// torch-mlir's import of bench/kernelbench/modules/l1_rms_norm_4d.py (linalg-on-tensors), at smaller shapes.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @rms_norm_nchw(%arg0: tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e-05 : f64
    %cst_1 = arith.constant 8.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x8x16x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg0 : tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>) outs(%0 : tensor<2x8x16x32xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %9 = arith.mulf %in, %in_2 : f32
      linalg.yield %9 : f32
    } -> tensor<2x8x16x32xf32>
    %2 = tensor.empty() : tensor<2x1x16x32xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<2x1x16x32xf32>) -> tensor<2x1x16x32xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%1 : tensor<2x8x16x32xf32>) outs(%3 : tensor<2x1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.addf %in, %out : f32
      linalg.yield %9 : f32
    } -> tensor<2x1x16x32xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<2x1x16x32xf32>) outs(%2 : tensor<2x1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.divf %in, %cst_1 : f32
      linalg.yield %9 : f32
    } -> tensor<2x1x16x32xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<2x1x16x32xf32>) outs(%2 : tensor<2x1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.truncf %cst_0 : f64 to f32
      %10 = arith.addf %in, %9 : f32
      linalg.yield %10 : f32
    } -> tensor<2x1x16x32xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6 : tensor<2x1x16x32xf32>) outs(%2 : tensor<2x1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = math.sqrt %in : f32
      linalg.yield %9 : f32
    } -> tensor<2x1x16x32xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %7 : tensor<2x8x16x32xf32>, tensor<2x1x16x32xf32>) outs(%0 : tensor<2x8x16x32xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %9 = arith.divf %in, %in_2 : f32
      linalg.yield %9 : f32
    } -> tensor<2x8x16x32xf32>
    return %8 : tensor<2x8x16x32xf32>
  }
}
