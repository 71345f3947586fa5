// torch-mlir's import of bench/kernelbench/modules/l1_frobenius_norm.py (linalg-on-tensors), at a smaller size.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> ()>
#map2 = affine_map<() -> ()>
module {
  func.func @l1_frobenius_norm(%arg0: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 2.000000e+00 : f32
    %cst_1 = arith.constant 5.000000e-01 : f32
    %0 = tensor.empty() : tensor<f32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<f32>) -> tensor<f32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%arg0 : tensor<2x4x8x16xf32>) outs(%1 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = math.absf %in : f32
      %7 = math.powf %6, %cst_0 : f32
      %8 = arith.addf %7, %out : f32
      linalg.yield %8 : f32
    } -> tensor<f32>
    %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%2 : tensor<f32>) outs(%0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = math.powf %in, %cst_1 : f32
      linalg.yield %6 : f32
    } -> tensor<f32>
    %4 = tensor.empty() : tensor<2x4x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %3 : tensor<2x4x8x16xf32>, tensor<f32>) outs(%4 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %6 = arith.divf %in, %in_2 : f32
      linalg.yield %6 : f32
    } -> tensor<2x4x8x16xf32>
    return %5 : tensor<2x4x8x16xf32>
  }
}
