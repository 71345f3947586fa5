// RUN: kforge-opt %s -split-input-file -kforge-normalize-importer | FileCheck %s
// Normalizing twice changes nothing more (kforge-tune normalizes what kforge-compile reads again).
// RUN: kforge-opt %s -split-input-file -kforge-normalize-importer -kforge-normalize-importer | FileCheck %s

// A loss as torch-mlir writes it: a total reduction to a rank-0 tensor, then scalar arithmetic reading it
// through tensor.extract. Its two reduced loops, walked together, are one (normalize-importer-collapse.mlir);
// then both ops get a leading unit loop and tensor<1> results: the reduction is a row reduction of one row,
// the division reads it as an operand through the unit loop, and the result is collapsed to rank 0 at the
// return only.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @mse(
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<1xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$IN]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins({{.*}} : tensor<800xf32>, tensor<800xf32>) outs(%[[INIT]] : tensor<1xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]]], iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<1xf32>)
// CHECK-NOT: tensor.extract
// CHECK: arith.divf
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[MEAN]] [] : tensor<1xf32> into tensor<f32>
// CHECK-NEXT: return %[[R]]
func.func @mse(%a: tensor<16x50xf32>, %b: tensor<16x50xf32>) -> tensor<f32> {
  %zero = arith.constant 0.000000e+00 : f32
  %n = arith.constant 8.000000e+02 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%a, %b : tensor<16x50xf32>, tensor<16x50xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %d = arith.subf %x, %y : f32
    %s = arith.mulf %d, %d : f32
    %r = arith.addf %s, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %mean = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%e : tensor<f32>) {
  ^bb0(%out: f32):
    %v = tensor.extract %sum[] : tensor<f32>
    %q = arith.divf %v, %n : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  return %mean : tensor<f32>
}

// -----

// A total argmax: the body's linalg.index moves past the new unit loop.
// CHECK-LABEL: func.func @argmax_all(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.index 1 : index
// CHECK: tensor.collapse_shape {{.*}} [] : tensor<1xi64> into tensor<i64>
func.func @argmax_all(%a: tensor<64xf32>) -> tensor<i64> {
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<f32>
  %e1 = tensor.empty() : tensor<i64>
  %m = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %i = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<i64>) -> tensor<i64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%a : tensor<64xf32>) outs(%m, %i : tensor<f32>, tensor<i64>) {
  ^bb0(%x: f32, %best: f32, %at: i64):
    %k = linalg.index 0 : index
    %ki = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %x, %best : f32
    %nb = arith.select %gt, %x, %best : f32
    %na = arith.select %gt, %ki, %at : i64
    linalg.yield %nb, %na : f32, i64
  } -> (tensor<f32>, tensor<i64>)
  return %r#1 : tensor<i64>
}

// -----

// A rank-0 statistic broadcast over a tensor (x / ||x||): the reduction is promoted; the elementwise op,
// which has loops of its own, reads the value through a collapse to rank 0, as an operand of its own.
// CHECK-LABEL: func.func @normalize_by_norm(
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} outs({{.*}} : tensor<1xf32>)
// CHECK: %[[ROOT:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<1xf32>)
// CHECK: math.sqrt
// CHECK: %[[S:.*]] = tensor.collapse_shape %[[ROOT]] [] : tensor<1xf32> into tensor<f32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]{{.*}} ins(%{{.*}}, %[[S]] : tensor<64xf32>, tensor<f32>) outs({{.*}} : tensor<64xf32>)
func.func @normalize_by_norm(%a: tensor<64xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%a : tensor<64xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.mulf %x, %x : f32
    %r = arith.addf %s, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %norm = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%sq : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%x: f32, %out: f32):
    %s = math.sqrt %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<64xf32>
  %res = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %norm : tensor<64xf32>, tensor<f32>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%x: f32, %n: f32, %out: f32):
    %q = arith.divf %x, %n : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  return %res : tensor<64xf32>
}
