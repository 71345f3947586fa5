#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#map5 = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#map6 = affine_map<(d0, d1) -> ()>
module {
  func.func @l2_linear_group_norm_hardtanh(%arg0: tensor<6x12xf32>, %arg1: tensor<16x12xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16xf32>, %arg4: tensor<16xf32>) -> tensor<6x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f64
    %cst_1 = arith.constant dense<1.000000e+00> : tensor<f32>
    %cst_2 = arith.constant dense<-1.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 1.000000e-05 : f64
    %cst_4 = arith.constant 4.000000e+00 : f64
    %cst_5 = arith.constant 4.000000e+00 : f32
    %0 = tensor.empty() : tensor<12x16xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<16x12xf32>) outs(%0 : tensor<12x16xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<6x16xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x16xf32>) -> tensor<6x16xf32>
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<6x12xf32>, tensor<12x16xf32>) outs(%2 : tensor<6x16xf32>) -> tensor<6x16xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg2 : tensor<16xf32>) outs(%1 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x16xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<6x16xf32>, tensor<6x16xf32>) outs(%1 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %32 = arith.addf %in, %in_9 : f32
      linalg.yield %32 : f32
    } -> tensor<6x16xf32>
    %expanded = tensor.expand_shape %5 [[0], [1, 2, 3]] output_shape [6, 4, 4, 1] : tensor<6x16xf32> into tensor<6x4x4x1xf32>
    %6 = tensor.empty() : tensor<6x4x4x1xf64>
    %7 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<6x4x4x1xf32>) outs(%6 : tensor<6x4x4x1xf64>) {
    ^bb0(%in: f32, %out: f64):
      %32 = arith.extf %in : f32 to f64
      linalg.yield %32 : f64
    } -> tensor<6x4x4x1xf64>
    %8 = tensor.empty() : tensor<6x4x1x1xf64>
    %9 = linalg.fill ins(%cst_0 : f64) outs(%8 : tensor<6x4x1x1xf64>) -> tensor<6x4x1x1xf64>
    %10 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%7 : tensor<6x4x4x1xf64>) outs(%9 : tensor<6x4x1x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %32 = arith.addf %in, %out : f64
      linalg.yield %32 : f64
    } -> tensor<6x4x1x1xf64>
    %11 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10 : tensor<6x4x1x1xf64>) outs(%8 : tensor<6x4x1x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %32 = arith.divf %in, %cst_4 : f64
      linalg.yield %32 : f64
    } -> tensor<6x4x1x1xf64>
    %12 = linalg.generic {indexing_maps = [#map2, #map4, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %11 : tensor<6x4x4x1xf64>, tensor<6x4x1x1xf64>) outs(%6 : tensor<6x4x4x1xf64>) {
    ^bb0(%in: f64, %in_9: f64, %out: f64):
      %32 = arith.subf %in, %in_9 : f64
      linalg.yield %32 : f64
    } -> tensor<6x4x4x1xf64>
    %13 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %12 : tensor<6x4x4x1xf64>, tensor<6x4x4x1xf64>) outs(%6 : tensor<6x4x4x1xf64>) {
    ^bb0(%in: f64, %in_9: f64, %out: f64):
      %32 = arith.mulf %in, %in_9 : f64
      linalg.yield %32 : f64
    } -> tensor<6x4x4x1xf64>
    %14 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%13 : tensor<6x4x4x1xf64>) outs(%9 : tensor<6x4x1x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %32 = arith.addf %in, %out : f64
      linalg.yield %32 : f64
    } -> tensor<6x4x1x1xf64>
    %15 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14 : tensor<6x4x1x1xf64>) outs(%8 : tensor<6x4x1x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %32 = arith.divf %in, %cst_4 : f64
      linalg.yield %32 : f64
    } -> tensor<6x4x1x1xf64>
    %16 = tensor.empty() : tensor<6x4x1x1xf32>
    %17 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15 : tensor<6x4x1x1xf64>) outs(%16 : tensor<6x4x1x1xf32>) {
    ^bb0(%in: f64, %out: f32):
      %32 = arith.truncf %in : f64 to f32
      linalg.yield %32 : f32
    } -> tensor<6x4x1x1xf32>
    %18 = linalg.fill ins(%cst : f32) outs(%16 : tensor<6x4x1x1xf32>) -> tensor<6x4x1x1xf32>
    %19 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%expanded : tensor<6x4x4x1xf32>) outs(%18 : tensor<6x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %32 = arith.addf %in, %out : f32
      linalg.yield %32 : f32
    } -> tensor<6x4x1x1xf32>
    %20 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19 : tensor<6x4x1x1xf32>) outs(%16 : tensor<6x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %32 = arith.divf %in, %cst_5 : f32
      linalg.yield %32 : f32
    } -> tensor<6x4x1x1xf32>
    %21 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17 : tensor<6x4x1x1xf32>) outs(%16 : tensor<6x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %32 = arith.truncf %cst_3 : f64 to f32
      %33 = arith.addf %in, %32 : f32
      linalg.yield %33 : f32
    } -> tensor<6x4x1x1xf32>
    %22 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21 : tensor<6x4x1x1xf32>) outs(%16 : tensor<6x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %32 = math.rsqrt %in : f32
      linalg.yield %32 : f32
    } -> tensor<6x4x1x1xf32>
    %expanded_6 = tensor.expand_shape %arg3 [[0, 1, 2, 3]] output_shape [1, 4, 4, 1] : tensor<16xf32> into tensor<1x4x4x1xf32>
    %23 = tensor.empty() : tensor<6x4x4x1xf32>
    %24 = linalg.generic {indexing_maps = [#map4, #map5, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%22, %expanded_6 : tensor<6x4x1x1xf32>, tensor<1x4x4x1xf32>) outs(%23 : tensor<6x4x4x1xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %32 = arith.mulf %in, %in_9 : f32
      linalg.yield %32 : f32
    } -> tensor<6x4x4x1xf32>
    %25 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20 : tensor<6x4x1x1xf32>) outs(%16 : tensor<6x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %32 = arith.negf %in : f32
      linalg.yield %32 : f32
    } -> tensor<6x4x1x1xf32>
    %26 = linalg.generic {indexing_maps = [#map4, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%25, %24 : tensor<6x4x1x1xf32>, tensor<6x4x4x1xf32>) outs(%23 : tensor<6x4x4x1xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %32 = arith.mulf %in, %in_9 : f32
      linalg.yield %32 : f32
    } -> tensor<6x4x4x1xf32>
    %expanded_7 = tensor.expand_shape %arg4 [[0, 1, 2, 3]] output_shape [1, 4, 4, 1] : tensor<16xf32> into tensor<1x4x4x1xf32>
    %27 = linalg.generic {indexing_maps = [#map2, #map5, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26, %expanded_7 : tensor<6x4x4x1xf32>, tensor<1x4x4x1xf32>) outs(%23 : tensor<6x4x4x1xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %32 = arith.addf %in, %in_9 : f32
      linalg.yield %32 : f32
    } -> tensor<6x4x4x1xf32>
    %collapsed = tensor.collapse_shape %24 [[0], [1, 2, 3]] : tensor<6x4x4x1xf32> into tensor<6x16xf32>
    %collapsed_8 = tensor.collapse_shape %27 [[0], [1, 2, 3]] : tensor<6x4x4x1xf32> into tensor<6x16xf32>
    %28 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%5, %collapsed : tensor<6x16xf32>, tensor<6x16xf32>) outs(%1 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %32 = arith.mulf %in, %in_9 : f32
      linalg.yield %32 : f32
    } -> tensor<6x16xf32>
    %29 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%28, %collapsed_8 : tensor<6x16xf32>, tensor<6x16xf32>) outs(%1 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %32 = arith.addf %in, %in_9 : f32
      linalg.yield %32 : f32
    } -> tensor<6x16xf32>
    %30 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel"]} ins(%29, %cst_2 : tensor<6x16xf32>, tensor<f32>) outs(%1 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %32 = arith.cmpf ogt, %in, %in_9 : f32
      %33 = arith.select %32, %in, %in_9 : f32
      linalg.yield %33 : f32
    } -> tensor<6x16xf32>
    %31 = linalg.generic {indexing_maps = [#map6, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst_1, %30 : tensor<f32>, tensor<6x16xf32>) outs(%1 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %32 = arith.cmpf olt, %in, %in_9 : f32
      %33 = arith.select %32, %in, %in_9 : f32
      linalg.yield %33 : f32
    } -> tensor<6x16xf32>
    return %31 : tensor<6x16xf32>
  }
}
