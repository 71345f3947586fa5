// RUN: kforge-opt %s -split-input-file -kforge-normalize-importer | FileCheck %s
// RUN: kforge-opt %S/../Tune/Inputs/layer-norm-chw.mlir -kforge-normalize-importer | FileCheck %s --check-prefix=LN
// RUN: kforge-opt %S/../Tune/Inputs/rms-norm-nchw.mlir -kforge-normalize-importer | FileCheck %s --check-prefix=RMS
// RUN: kforge-opt %S/../Tune/Inputs/batch-norm-nchw.mlir -kforge-normalize-importer | FileCheck %s --check-prefix=BN

// Loops that every op walks together become one, where some op has more loops than a GPU grid has dimensions
// or reduces over several. torch's LayerNorm over (C, H, W): the statistics reduce rows of C*H*W, the weight
// and bias are read as rows of C*H*W; the argument is collapsed on entry, the result expanded on return.
// LN-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// LN-DAG: #[[$STAT:.*]] = affine_map<(d0, d1) -> (d0)>
// LN-DAG: #[[$AFFINE:.*]] = affine_map<(d0, d1) -> (d1)>
// LN-LABEL: func.func @layer_norm_chw(
// LN-SAME: %[[X:.*]]: tensor<4x8x16x32xf32>, %[[W:.*]]: tensor<8x16x32xf32>, %[[B:.*]]: tensor<8x16x32xf32>) -> tensor<4x8x16x32xf32>
// LN: tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2, 3]] : tensor<4x8x16x32xf32> into tensor<4x4096xf32>
// LN: linalg.generic {indexing_maps = [#[[$ROW]], #[[$STAT]]], iterator_types = ["parallel", "reduction"]}
// LN-DAG: tensor.collapse_shape %[[W]] {{\[}}[0, 1, 2]] : tensor<8x16x32xf32> into tensor<4096xf32>
// LN-DAG: tensor.collapse_shape %[[B]] {{\[}}[0, 1, 2]] : tensor<8x16x32xf32> into tensor<4096xf32>
// LN: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ROW]], #[[$STAT]], #[[$STAT]], #[[$AFFINE]], #[[$AFFINE]], #[[$ROW]]], iterator_types = ["parallel", "parallel"]}
// LN: %[[OUT:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0], [1, 2, 3]] output_shape [4, 8, 16, 32] : tensor<4x4096xf32> into tensor<4x8x16x32xf32>
// LN-NEXT: return %[[OUT]]

// An RMS norm over the channels of NCHW (mean over dim 1, keepdim): the reduction stays over C, between N and
// H*W, which become one loop; its loops are then ordered N, H*W, C (the reduced loop last: it reads the input
// through (n, c, hw) as (d0, d2, d1)).
// RMS-DAG: #[[$ALL:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// RMS-DAG: #[[$NHW:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// RMS-DAG: #[[$NCHW_LAST:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// RMS-DAG: #[[$STAT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// RMS-LABEL: func.func @rms_norm_nchw(
// RMS: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<2x8x16x32xf32> into tensor<2x8x512xf32>
// RMS: linalg.generic {indexing_maps = [#[[$NCHW_LAST]], #[[$STAT]]], iterator_types = ["parallel", "parallel", "reduction"]} {{.*}} outs({{.*}} : tensor<2x512xf32>)
// RMS: linalg.generic {indexing_maps = [#[[$ALL]], #[[$NHW]], #[[$ALL]]], iterator_types = ["parallel", "parallel", "parallel"]}
// RMS: tensor.expand_shape {{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 16, 32]

// Eval-mode BatchNorm: 4-D elementwise with per-channel statistics; H and W merge, N and C stay apart (the
// statistics are read along C alone).
// BN-DAG: #[[$ALL:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// BN-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// BN-LABEL: func.func @batch_norm_nchw(
// BN: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<4x8x16x32xf32> into tensor<4x8x512xf32>
// BN: linalg.generic {indexing_maps = [#[[$ALL]], #[[$C]], #[[$C]], #[[$C]], #[[$C]], #[[$ALL]]], iterator_types = ["parallel", "parallel", "parallel"]}
// BN-NOT: linalg.generic
// BN: tensor.expand_shape {{.*}} output_shape [4, 8, 16, 32]

// A 4-D elementwise op alone: one loop.
// CHECK-LABEL: func.func @relu_4d(
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : tensor<2x3x4x5xf32> into tensor<120xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[FLAT]] : tensor<120xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1, 2, 3]] output_shape [2, 3, 4, 5]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @relu_4d(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4x5xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x4x5xf32>) outs(%e : tensor<2x3x4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x3x4x5xf32>
  return %y : tensor<2x3x4x5xf32>
}

// -----

// A transposed read (NCHW -> NHWC) keeps the loops it permutes apart from each other: H and W still merge.
// CHECK-LABEL: func.func @nchw_to_nhwc_scale(
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins({{.*}} : tensor<2x3x20xf32>) outs({{.*}} : tensor<2x20x3xf32>)
#nchw = affine_map<(n, h, w, c) -> (n, c, h, w)>
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @nchw_to_nhwc_scale(%x: tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<2x4x5x3xf32>
  %y = linalg.generic {indexing_maps = [#nchw, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x4x5xf32>) outs(%e : tensor<2x4x5x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %two : f32
    linalg.yield %r : f32
  } -> tensor<2x4x5x3xf32>
  return %y : tensor<2x4x5x3xf32>
}

// -----

// A tensor that a named op also reads keeps its dimensions: the batch matmul's operand is 3-D, so the 4-D
// op that produces it merges nothing that would leave a reshape between the two.
// CHECK-LABEL: func.func @feeds_a_batch_matmul(
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.batch_matmul
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sum = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @feeds_a_batch_matmul(%x: tensor<2x4x8x3xf32>, %w: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s = linalg.generic {indexing_maps = [#id4, #sum], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x8x3xf32>) outs(%f : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %e2 = tensor.empty() : tensor<2x4x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %m = linalg.batch_matmul ins(%s, %w : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%f2 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %m : tensor<2x4x16xf32>
}

// -----

// Three loops, one reduction over the last: the two parallel loops, which every op walks together, become one
// (rows of 2*4, the form the row kernels take: they distribute a 2-D root or a row sum over lanes).
// CHECK-LABEL: func.func @rows_3d(
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<8x8xf32>)
// CHECK: tensor.expand_shape {{.*}} {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @rows_3d(%x: tensor<2x4x8xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#in3, #out2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x8xf32>) outs(%f : tensor<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// A matmul with one column (torch's x @ v, v of K x 1) is the row reduction it is: A's rows times v, the
// unit column collapsed away on v and the init, and expanded back on the result.
// CHECK-DAG: #[[$AK:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$M:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @one_column(
// CHECK-SAME: %[[A:.*]]: tensor<8x16xf32>, %[[V:.*]]: tensor<16x1xf32>
// CHECK: %[[VEC:.*]] = tensor.collapse_shape %[[V]] {{\[}}[0, 1]] : tensor<16x1xf32> into tensor<16xf32>
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<8xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$AK]], #[[$K]], #[[$M]]], iterator_types = ["parallel", "reduction"]} ins(%[[A]], %[[VEC]] : tensor<8x16xf32>, tensor<16xf32>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
// CHECK-NOT: linalg.matmul
func.func @one_column(%a: tensor<8x16xf32>, %v: tensor<16x1xf32>) -> tensor<8x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1xf32>) -> tensor<8x1xf32>
  %y = linalg.matmul ins(%a, %v : tensor<8x16xf32>, tensor<16x1xf32>) outs(%f : tensor<8x1xf32>) -> tensor<8x1xf32>
  return %y : tensor<8x1xf32>
}

// -----

// nn.Linear on a batch of one, bf16 weights (the transpose folded into B's map, the extensions into the
// matmul): a reduction over each weight row read along K, with the matmul's own body (bf16 extended to f32,
// multiply, add).
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$N:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @linear_batch_of_one(
// CHECK-SAME: %[[X:.*]]: tensor<1x16xbf16>, %[[W:.*]]: tensor<4x16xbf16>
// CHECK: %[[XV:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<1x16xbf16> into tensor<16xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[$K]], #[[$NK]], #[[$N]]], iterator_types = ["parallel", "reduction"]} ins(%[[XV]], %[[W]] : tensor<16xbf16>, tensor<4x16xbf16>) outs({{.*}} : tensor<4xf32>)
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape {{.*}} {{\[}}[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
func.func @linear_batch_of_one(%x: tensor<1x16xbf16>, %w: tensor<4x16xbf16>) -> tensor<1x4xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.empty() : tensor<1x16xf32>
  %x32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x16xbf16>) outs(%xe : tensor<1x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %r = arith.extf %in : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  %we = tensor.empty() : tensor<4x16xf32>
  %w32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<4x16xbf16>) outs(%we : tensor<4x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %r = arith.extf %in : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %te = tensor.empty() : tensor<16x4xf32>
  %wt = linalg.transpose ins(%w32 : tensor<4x16xf32>) outs(%te : tensor<16x4xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<1x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = linalg.matmul ins(%x32, %wt : tensor<1x16xf32>, tensor<16x4xf32>) outs(%f : tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// argmin over the last dimension of a 3-D tensor (torch.argmin(x, dim=2)): the body reads the reduced loop's
// index, so that loop stays apart, but the two batch loops still merge into rows (before, any index read kept
// every loop apart, and the 3-D reduction got no GPU proposal).
// CHECK-LABEL: func.func @argmin_last
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   linalg.index 1 : index
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [4, 8] : tensor<32xi64> into tensor<4x8xi64>
func.func @argmin_last(%x: tensor<4x8x16xf32>) -> tensor<4x8xi64> {
  %c0 = arith.constant 0 : i64
  %inf = arith.constant 0x7F800000 : f32
  %ei = tensor.empty() : tensor<4x8xi64>
  %fi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<4x8xi64>) -> tensor<4x8xi64>
  %ev = tensor.empty() : tensor<4x8xf32>
  %fv = linalg.fill ins(%inf : f32) outs(%ev : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x8x16xf32>) outs(%fv, %fi : tensor<4x8xf32>, tensor<4x8xi64>) {
  ^bb0(%in: f32, %v: f32, %i: i64):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i64
    %m = arith.minimumf %in, %v : f32
    %lt = arith.cmpf olt, %in, %v : f32
    %s = arith.select %lt, %ki, %i : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<4x8xf32>, tensor<4x8xi64>)
  return %r#1 : tensor<4x8xi64>
}

// -----

// torch-mlir's InstanceNorm: the NCHW input viewed as (N*C, H, W) by a reshape of the argument, the statistics
// in f64 (an extf of the whole input, read by both reductions). H and W merge through the reshape (it composes
// with the collapse into one of the argument) into rows of H*W, and the extf is recomputed in each reduction
// instead of stored: nothing holds the input in f64 (on the GPU a tensor twice the input's size, written and
// read twice: the module ran at 0.04x eager on an H100, results/benchmarks-h100/2026-12-07/s69-call-4/).
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$STAT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @instance_norm(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NOT: tensor<8x128xf64>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2, 3]] : tensor<2x4x8x16xf32> into tensor<8x128xf32>
// CHECK-NOT: tensor<8x128xf64>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ROW]], #[[$STAT]]], iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<8x128xf32>) outs({{.*}} : tensor<8xf64>)
// CHECK: arith.extf
// CHECK: linalg.generic {indexing_maps = [#[[$ROW]], #[[$STAT]], #[[$STAT]]], iterator_types = ["parallel", "reduction"]} ins({{.*}}, %[[SUM]] : tensor<8x128xf32>, tensor<8xf64>)
// CHECK: arith.extf
// CHECK-NOT: tensor<8x128xf64>
// CHECK: tensor.expand_shape {{.*}} {{\[}}[0, 1], [2, 3]] output_shape [2, 4, 8, 16] : tensor<8x128xf32> into tensor<2x4x8x16xf32>
#all = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#stat = affine_map<(d0, d1, d2) -> (d0)>
func.func @instance_norm(%x: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %zero = arith.constant 0.0 : f64
  %n = arith.constant 128.0 : f64
  %eps = arith.constant 1.0e-5 : f64
  %rows = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %e64 = tensor.empty() : tensor<8x8x16xf64>
  %wide = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%rows : tensor<8x8x16xf32>) outs(%e64 : tensor<8x8x16xf64>) {
  ^bb0(%in: f32, %out: f64):
    %w = arith.extf %in : f32 to f64
    linalg.yield %w : f64
  } -> tensor<8x8x16xf64>
  %es = tensor.empty() : tensor<8xf64>
  %zs = linalg.fill ins(%zero : f64) outs(%es : tensor<8xf64>) -> tensor<8xf64>
  %sum = linalg.generic {indexing_maps = [#all, #stat], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%wide : tensor<8x8x16xf64>) outs(%zs : tensor<8xf64>) {
  ^bb0(%in: f64, %acc: f64):
    %a = arith.addf %in, %acc : f64
    linalg.yield %a : f64
  } -> tensor<8xf64>
  %var = linalg.generic {indexing_maps = [#all, #stat, #stat], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%wide, %sum : tensor<8x8x16xf64>, tensor<8xf64>) outs(%zs : tensor<8xf64>) {
  ^bb0(%in: f64, %s: f64, %acc: f64):
    %mean = arith.divf %s, %n : f64
    %c = arith.subf %in, %mean : f64
    %sq = arith.mulf %c, %c : f64
    %a = arith.addf %sq, %acc : f64
    linalg.yield %a : f64
  } -> tensor<8xf64>
  %e32 = tensor.empty() : tensor<8x8x16xf32>
  %y = linalg.generic {indexing_maps = [#all, #stat, #stat, #all], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%rows, %sum, %var : tensor<8x8x16xf32>, tensor<8xf64>, tensor<8xf64>) outs(%e32 : tensor<8x8x16xf32>) {
  ^bb0(%in: f32, %s: f64, %v: f64, %out: f32):
    %mean = arith.divf %s, %n : f64
    %var_n = arith.divf %v, %n : f64
    %ve = arith.addf %var_n, %eps : f64
    %r = math.rsqrt %ve : f64
    %x64 = arith.extf %in : f32 to f64
    %c = arith.subf %x64, %mean : f64
    %yy = arith.mulf %c, %r : f64
    %y32 = arith.truncf %yy : f64 to f32
    linalg.yield %y32 : f32
  } -> tensor<8x8x16xf32>
  %out = tensor.expand_shape %y [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
  return %out : tensor<2x4x8x16xf32>
}
