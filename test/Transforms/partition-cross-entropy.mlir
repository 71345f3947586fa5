// Cross entropy as torch-mlir imports it (bench/kernelbench/modules/l1_cross_entropy.py, small variant:
// F.cross_entropy of 24 x 10 logits and int64 class indices), normalized, then partitioned. nll_loss checks
// the class indices in a linalg.generic without results before the reduction that checks them again while
// reading through them; kforge-partition refused the result-less op ("cannot be placed in a dispatch"), until
// kforge-normalize-importer erased it (normalize-importer-gather.mlir). Four dispatches: the row max, the row
// sum of exponentials (which reads the max; both leave for the loss, and a dispatch's results are one op's:
// partition-reshaped-siblings.mlir), the ignore-index mask, the loss (its checks kept).
// RUN: kforge-opt %s --kforge-normalize-importer --kforge-partition | FileCheck %s
// CHECK: func.func private @[[MAX:k_[0-9a-f]+]](%{{.*}}: tensor<24x10xf32>) -> tensor<24xf32>
// CHECK: func.func private @[[SUM:k_[0-9a-f]+]](%{{.*}}: tensor<24x10xf32>, %{{.*}}: tensor<24xf32>) -> tensor<24xf32>
// CHECK: func.func private @[[MASK:k_[0-9a-f]+]](%{{.*}}: tensor<24xi64>) -> tensor<24xi1>
// CHECK: func.func private @[[LOSS:k_[0-9a-f]+]](
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
// CHECK: cf.assert %{{.*}}, "index must be larger or equal to 0"
// CHECK: func.func @l1_cross_entropy(
// CHECK-NOT: linalg.generic
// CHECK: call @[[MAX]](
// CHECK-NEXT: call @[[SUM]](
// CHECK-NEXT: call @[[MASK]](
// CHECK-NEXT: call @[[LOSS]](
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0) -> ()>
#map5 = affine_map<() -> ()>
module {
  func.func @l1_cross_entropy(%arg0: tensor<24x10xf32>, %arg1: tensor<24xi64>) -> tensor<f32> {
    %c-100_i64 = arith.constant -100 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0xFF800000 : f32
    %c10 = arith.constant 10 : index
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_2 = arith.constant dense<0> : tensor<i64>
    %0 = tensor.empty() : tensor<24xi64>
    %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<24xi64>) -> tensor<24xi64>
    %2 = tensor.empty() : tensor<24xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<24xf32>) -> tensor<24xf32>
    %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<24x10xf32>) outs(%3, %1 : tensor<24xf32>, tensor<24xi64>) {
    ^bb0(%in: f32, %out: f32, %out_4: i64):
      %27 = linalg.index 1 : index
      %28 = arith.index_cast %27 : index to i64
      %29 = arith.maximumf %in, %out : f32
      %30 = arith.cmpf ogt, %in, %out : f32
      %31 = arith.select %30, %28, %out_4 : i64
      linalg.yield %29, %31 : f32, i64
    } -> (tensor<24xf32>, tensor<24xi64>)
    %expanded = tensor.expand_shape %4#0 [[0, 1]] output_shape [24, 1] : tensor<24xf32> into tensor<24x1xf32>
    %5 = tensor.empty() : tensor<24x10xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<24x10xf32>, tensor<24x1xf32>) outs(%5 : tensor<24x10xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %27 = arith.subf %in, %in_4 : f32
      linalg.yield %27 : f32
    } -> tensor<24x10xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<24x10xf32>) outs(%5 : tensor<24x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = math.exp %in : f32
      linalg.yield %27 : f32
    } -> tensor<24x10xf32>
    %8 = tensor.empty() : tensor<24x1xf32>
    %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<24x1xf32>) -> tensor<24x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<24x10xf32>) outs(%9 : tensor<24x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<24x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<24x1xf32>) outs(%8 : tensor<24x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = math.log %in : f32
      linalg.yield %27 : f32
    } -> tensor<24x1xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %11 : tensor<24x10xf32>, tensor<24x1xf32>) outs(%5 : tensor<24x10xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %27 = arith.subf %in, %in_4 : f32
      linalg.yield %27 : f32
    } -> tensor<24x10xf32>
    %13 = tensor.empty() : tensor<24xi1>
    %14 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%arg1 : tensor<24xi64>) outs(%13 : tensor<24xi1>) {
    ^bb0(%in: i64, %out: i1):
      %27 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %27 : i1
    } -> tensor<24xi1>
    %15 = linalg.generic {indexing_maps = [#map3, #map3, #map4, #map3], iterator_types = ["parallel"]} ins(%14, %arg1, %cst_2 : tensor<24xi1>, tensor<24xi64>, tensor<i64>) outs(%0 : tensor<24xi64>) {
    ^bb0(%in: i1, %in_4: i64, %in_5: i64, %out: i64):
      %27 = arith.select %in, %in_4, %in_5 : i64
      linalg.yield %27 : i64
    } -> tensor<24xi64>
    %expanded_3 = tensor.expand_shape %15 [[0, 1]] output_shape [24, 1] : tensor<24xi64> into tensor<24x1xi64>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_3 : tensor<24x1xi64>) outs(%9 : tensor<24x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %27 = linalg.index 0 : index
      %28 = arith.index_cast %in : i64 to index
      %29 = arith.cmpi slt, %28, %c10 : index
      cf.assert %29, "index must be smaller than dim size"
      %30 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %30, "index must be larger or equal to 0"
      %extracted = tensor.extract %12[%27, %28] : tensor<24x10xf32>
      linalg.yield %extracted : f32
    } -> tensor<24x1xf32>
    %collapsed = tensor.collapse_shape %16 [[0, 1]] : tensor<24x1xf32> into tensor<24xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%collapsed : tensor<24xf32>) outs(%2 : tensor<24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.negf %in : f32
      linalg.yield %27 : f32
    } -> tensor<24xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map3, #map4, #map3], iterator_types = ["parallel"]} ins(%14, %17, %cst_1 : tensor<24xi1>, tensor<24xf32>, tensor<f32>) outs(%2 : tensor<24xf32>) {
    ^bb0(%in: i1, %in_4: f32, %in_5: f32, %out: f32):
      %27 = arith.select %in, %in_4, %in_5 : f32
      linalg.yield %27 : f32
    } -> tensor<24xf32>
    %19 = tensor.empty() : tensor<i64>
    %20 = linalg.fill ins(%c0_i64 : i64) outs(%19 : tensor<i64>) -> tensor<i64>
    %21 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction"]} ins(%14 : tensor<24xi1>) outs(%20 : tensor<i64>) {
    ^bb0(%in: i1, %out: i64):
      %27 = arith.extui %in : i1 to i64
      %28 = arith.addi %27, %out : i64
      linalg.yield %28 : i64
    } -> tensor<i64>
    %22 = tensor.empty() : tensor<f32>
    %23 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = []} ins(%21 : tensor<i64>) outs(%22 : tensor<f32>) {
    ^bb0(%in: i64, %out: f32):
      %27 = arith.sitofp %in : i64 to f32
      linalg.yield %27 : f32
    } -> tensor<f32>
    %24 = linalg.fill ins(%cst_0 : f32) outs(%22 : tensor<f32>) -> tensor<f32>
    %25 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction"]} ins(%18 : tensor<24xf32>) outs(%24 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<f32>
    %26 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = []} ins(%25, %23 : tensor<f32>, tensor<f32>) outs(%22 : tensor<f32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %27 = arith.divf %in, %in_4 : f32
      linalg.yield %27 : f32
    } -> tensor<f32>
    return %26 : tensor<f32>
  }
}
