// torch-mlir's import of bench/kernelbench/modules/l1_mse_loss.py (linalg-on-tensors), at full size.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<() -> ()>
module {
  func.func @l1_mse_loss(%arg0: tensor<16384x32768xf32>, %arg1: tensor<16384x32768xf32>) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0x4E000000 : f32
    %0 = tensor.empty() : tensor<16384x32768xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<16384x32768xf32>, tensor<16384x32768xf32>) outs(%0 : tensor<16384x32768xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %7 = arith.subf %in, %in_1 : f32
      linalg.yield %7 : f32
    } -> tensor<16384x32768xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<16384x32768xf32>) outs(%0 : tensor<16384x32768xf32>) {
    ^bb0(%in: f32, %out: f32):
      %7 = math.fpowi %in, %c2_i64 : f32, i64
      linalg.yield %7 : f32
    } -> tensor<16384x32768xf32>
    %3 = tensor.empty() : tensor<f32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<f32>) -> tensor<f32>
    %5 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%2 : tensor<16384x32768xf32>) outs(%4 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %7 = arith.addf %in, %out : f32
      linalg.yield %7 : f32
    } -> tensor<f32>
    %6 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%5 : tensor<f32>) outs(%3 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %7 = arith.divf %in, %cst_0 : f32
      linalg.yield %7 : f32
    } -> tensor<f32>
    return %6 : tensor<f32>
  }
}
