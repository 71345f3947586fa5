#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0) -> (d0)>
module {
  func.func @loss(%arg0: tensor<64xi1>, %arg1: tensor<64x32xf32>, %arg2: tensor<64xi64>, %arg3: tensor<64xf32>, %arg4: tensor<64xf32>) -> tensor<1xf32> {
    %c0_i64 = arith.constant 0 : i64
    %0 = tensor.empty() : tensor<1xi64>
    %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<1xi64>) -> tensor<1xi64>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<64xi1>) outs(%1 : tensor<1xi64>) {
    ^bb0(%in: i1, %out: i64):
      %8 = arith.extui %in : i1 to i64
      %9 = arith.addi %8, %out : i64
      linalg.yield %9 : i64
    } -> tensor<1xi64>
    %c32 = arith.constant 32 : index
    %cst = arith.constant 0.000000e+00 : f32
    %3 = tensor.empty() : tensor<1xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<1xf32>) -> tensor<1xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg2, %arg3, %arg4 : tensor<64xi1>, tensor<64xi64>, tensor<64xf32>, tensor<64xf32>) outs(%4 : tensor<1xf32>) {
    ^bb0(%in: i1, %in_0: i64, %in_1: f32, %in_2: f32, %out: f32):
      %8 = arith.select %in, %in_0, %c0_i64 : i64
      %9 = linalg.index 1 : index
      %10 = arith.index_cast %8 : i64 to index
      %11 = arith.cmpi slt, %10, %c32 : index
      cf.assert %11, "index must be smaller than dim size"
      %12 = arith.cmpi sge, %8, %c0_i64 : i64
      cf.assert %12, "index must be larger or equal to 0"
      %extracted = tensor.extract %arg1[%9, %10] : tensor<64x32xf32>
      %13 = arith.subf %extracted, %in_1 : f32
      %14 = math.log %in_2 : f32
      %15 = arith.subf %13, %14 : f32
      %16 = arith.negf %15 : f32
      %17 = arith.select %in, %16, %cst : f32
      %18 = arith.addf %17, %out : f32
      linalg.yield %18 : f32
    } -> tensor<1xf32>
    %6 = tensor.empty() : tensor<1xf32>
    %7 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel"]} ins(%2, %5 : tensor<1xi64>, tensor<1xf32>) outs(%6 : tensor<1xf32>) {
    ^bb0(%in: i64, %in_0: f32, %out: f32):
      %8 = arith.sitofp %in : i64 to f32
      %9 = arith.divf %in_0, %8 : f32
      linalg.yield %9 : f32
    } -> tensor<1xf32>
    return %7 : tensor<1xf32>
  }
}
