// torch-mlir's nn.Sequential(nn.Linear(64, 32), nn.ReLU()) on a 2 x 16 x 64 input (kforge.import_module): the input
// collapsed to 2-D for the matmul, the result expanded back to 3-D before the ReLU.
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @sequential(%arg0: tensor<2x16x64xf32>, %arg1: tensor<32x64xf32>, %arg2: tensor<32xf32>) -> tensor<2x16x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<2x16x64xf32> into tensor<32x64xf32>
    %0 = tensor.empty() : tensor<64x32xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<32x64xf32>) outs(%0 : tensor<64x32xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<32x32xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<32x32xf32>) -> tensor<32x32xf32>
    %3 = linalg.matmul ins(%collapsed, %transposed : tensor<32x64xf32>, tensor<64x32xf32>) outs(%2 : tensor<32x32xf32>) -> tensor<32x32xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg2 : tensor<32xf32>) outs(%1 : tensor<32x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x32xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<32x32xf32>, tensor<32x32xf32>) outs(%1 : tensor<32x32xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %8 = arith.addf %in, %in_0 : f32
      linalg.yield %8 : f32
    } -> tensor<32x32xf32>
    %expanded = tensor.expand_shape %5 [[0, 1], [2]] output_shape [2, 16, 32] : tensor<32x32xf32> into tensor<2x16x32xf32>
    %6 = tensor.empty() : tensor<2x16x32xf32>
    %7 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x16x32xf32>) outs(%6 : tensor<2x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %8 = arith.cmpf ugt, %in, %cst : f32
      %9 = arith.select %8, %in, %cst : f32
      linalg.yield %9 : f32
    } -> tensor<2x16x32xf32>
    return %7 : tensor<2x16x32xf32>
  }
}
