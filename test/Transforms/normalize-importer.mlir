// RUN: kforge-opt %s -split-input-file -kforge-normalize-importer | FileCheck %s

// nn.Linear: the weight's transpose becomes the matmul's B map (transpose_b form); the bias broadcast copy
// is fused into the add.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<32x64xf32>, %[[BIAS:.*]]: tensor<32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[MM:.*]] = linalg.matmul indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]] ins(%[[X]], %[[W]] : tensor<16x64xf32>, tensor<32x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[MM]], %[[BIAS]] :
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear(%x: tensor<16x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64x32xf32>
  %t = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%0 : tensor<64x32xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<16x32xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %3 = linalg.matmul ins(%x, %t : tensor<16x64xf32>, tensor<64x32xf32>) outs(%2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %4 = linalg.broadcast ins(%b : tensor<32xf32>) outs(%1 : tensor<16x32xf32>) dimensions = [0]
  %5 = linalg.add ins(%3, %4 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %5 : tensor<16x32xf32>
}

// -----

// A batched transposed operand (bmm with x.transpose(1, 2)) folds into batch_matmul's A map.
// CHECK-DAG: #[[$AT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-LABEL: func.func @bmm_transposed_a(
// CHECK-SAME: %[[X:.*]]: tensor<2x8x4xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul indexing_maps = [#[[$AT]], {{.*}}] ins(%[[X]],
func.func @bmm_transposed_a(%x: tensor<2x8x4xf32>, %y: tensor<2x8x6xf32>) -> tensor<2x4x6xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x4x8xf32>
  %t = linalg.transpose ins(%x : tensor<2x8x4xf32>) outs(%0 : tensor<2x4x8xf32>) permutation = [0, 2, 1]
  %1 = tensor.empty() : tensor<2x4x6xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %3 = linalg.batch_matmul ins(%t, %y : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%2 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  return %3 : tensor<2x4x6xf32>
}

// -----

// A transpose that feeds no contraction becomes a generic (a permuted copy a schedule can fuse); linalg.map
// too; a splat rank-0 constant operand (leaky relu's 0) is inlined, so no host constant reaches a kernel.
// CHECK-LABEL: func.func @transpose_map_constant
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.map
// CHECK-NOT: dense<
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @transpose_map_constant(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %0 = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%0 : tensor<8x4xf32>) permutation = [1, 0]
  %m = linalg.map ins(%t : tensor<8x4xf32>) outs(%0 : tensor<8x4xf32>)
    (%in: f32, %init: f32) {
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    }
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%zero, %m : tensor<f32>, tensor<8x4xf32>) outs(%0 : tensor<8x4xf32>) {
  ^bb0(%z: f32, %in: f32, %out: f32):
    %y = arith.maximumf %z, %in : f32
    linalg.yield %y : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// Keepdim reduction (LayerNorm over three dims): the output map (d0, 0, 0, 0) becomes (d0) on a rank-reduced
// tensor, and its broadcast consumer reads it through (d0) too; the elementwise chain on the statistics is
// fused into that consumer. The three reduced loops, walked together by both ops, are then one: rows of 256
// (normalize-importer-collapse.mlir), the argument collapsed on entry and the result expanded on return.
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @keepdim_mean
// CHECK: %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<2xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x256xf32>) outs(%[[FILL]] : tensor<2xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$ROW]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[SUM]] : tensor<2x256xf32>, tensor<2xf32>)
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2, 3]] output_shape [2, 4, 8, 8]
// CHECK-NEXT: return
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#keep = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, 0)>
func.func @keepdim_mean(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %n = arith.constant 2.560000e+02 : f32
  %e = tensor.empty() : tensor<2x1x1x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %s = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<2x4x8x8xf32>) outs(%f : tensor<2x1x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<2x1x1x1xf32>
  %m = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x1x1x1xf32>) outs(%e : tensor<2x1x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %n : f32
    linalg.yield %d : f32
  } -> tensor<2x1x1x1xf32>
  %o = tensor.empty() : tensor<2x4x8x8xf32>
  %c = linalg.generic {indexing_maps = [#id4, #keep, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x4x8x8xf32>, tensor<2x1x1x1xf32>) outs(%o : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %d = arith.subf %in, %mean : f32
    linalg.yield %d : f32
  } -> tensor<2x4x8x8xf32>
  return %c : tensor<2x4x8x8xf32>
}

// -----

// softmax as torch-mlir emits it: the unused argmax result of the max goes, and the keepdim
// expand_shape of the max folds into its consumer's map.
// CHECK-LABEL: func.func @softmax_max
// CHECK-NOT: i64
// CHECK-NOT: tensor.expand_shape
// CHECK: } -> tensor<8xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<8xf32>)
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @softmax_max(%arg0: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<8xi64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<8xi64>) -> tensor<8xi64>
  %2 = tensor.empty() : tensor<8xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8xf32>) -> tensor<8xf32>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x64xf32>) outs(%3, %1 : tensor<8xf32>, tensor<8xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %12 = linalg.index 1 : index
    %13 = arith.index_cast %12 : index to i64
    %14 = arith.maximumf %in, %out : f32
    %15 = arith.cmpf ogt, %in, %out : f32
    %16 = arith.select %15, %13, %out_1 : i64
    linalg.yield %14, %16 : f32, i64
  } -> (tensor<8xf32>, tensor<8xi64>)
  %expanded = tensor.expand_shape %4#0 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %5 = tensor.empty() : tensor<8x64xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<8x64xf32>, tensor<8x1xf32>) outs(%5 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.subf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<8x64xf32>
  return %6 : tensor<8x64xf32>
}

// -----

// RMS norm 4-D (mean over dim 1, keepdim): the unit loop of the statistics' elementwise chain is dropped,
// so the chain fuses into the broadcasting consumer; x ** 2 (fpowi, i64 exponent) is x * x. H and W, walked
// together by both ops, are one loop, and the reduction's loops are ordered N, H*W, C (the reduced one last).
// CHECK-DAG: #[[$CLAST:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[$RED:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @rms_keepdim
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$CLAST]], #[[$RED]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[SQ:.*]] = arith.mulf %[[IN:.*]], %[[IN]] : f32
// CHECK: arith.addf %[[SQ]]
// CHECK: -> tensor<2x64xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[SUM]] : tensor<2x4x64xf32>, tensor<2x64xf32>)
// CHECK: math.sqrt
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#red = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
func.func @rms_keepdim(%arg0: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %c2_i64 = arith.constant 2 : i64
  %cst = arith.constant 0.000000e+00 : f32
  %cst_1 = arith.constant 4.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x4x8x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x4x8x8xf32>) outs(%0 : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = math.fpowi %in, %c2_i64 : f32, i64
    linalg.yield %9 : f32
  } -> tensor<2x4x8x8xf32>
  %2 = tensor.empty() : tensor<2x1x8x8xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<2x1x8x8xf32>) -> tensor<2x1x8x8xf32>
  %4 = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%1 : tensor<2x4x8x8xf32>) outs(%3 : tensor<2x1x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<2x1x8x8xf32>
  %5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<2x1x8x8xf32>) outs(%2 : tensor<2x1x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %cst_1 : f32
    %10 = math.sqrt %9 : f32
    linalg.yield %10 : f32
  } -> tensor<2x1x8x8xf32>
  %8 = linalg.generic {indexing_maps = [#id, #red, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %5 : tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32>) outs(%0 : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %9 = arith.divf %in, %in_2 : f32
    linalg.yield %9 : f32
  } -> tensor<2x4x8x8xf32>
  return %8 : tensor<2x4x8x8xf32>
}

// -----

// A keepdim result the function returns keeps its shape (kforge-tune's root is the op producing it).
// CHECK-DAG: #[[$KEEP:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @returned_keepdim
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$KEEP]]], {{.*}} outs(%{{.*}} : tensor<2x1xf32>)
// CHECK: } -> tensor<2x1xf32>
// CHECK-NEXT: return
func.func @returned_keepdim(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x1xf32>) -> tensor<2x1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x8xf32>) outs(%f : tensor<2x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<2x1xf32>
  return %s : tensor<2x1xf32>
}

// -----

// Integer powers: pow(x, 3.0) (MinGPT's GELU) and fpowi(x, 3) are multiplications, exact for negative
// bases; a negative exponent is a reciprocal; a fractional one stays powf; a non-constant i64 exponent
// becomes an i32 (libdevice's __nv_powif), clamped with its parity kept.
// CHECK-LABEL: func.func @powers(
// CHECK-SAME: %[[X:.*]]: f32, %[[N:.*]]: i64
// CHECK: %[[X2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[X3:.*]] = arith.mulf %[[X]], %[[X2]] : f32
// CHECK: %[[Y2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[Y3:.*]] = arith.mulf %[[X]], %[[Y2]] : f32
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: math.powf %[[X]], %{{.*}} : f32
// CHECK: %[[LOW:.*]] = arith.maxsi
// CHECK: %[[ODD:.*]] = arith.andi %[[N]]
// CHECK: %[[KEPT:.*]] = arith.ori %[[LOW]], %[[ODD]] : i64
// CHECK: %[[N32:.*]] = arith.trunci %[[KEPT]] : i64 to i32
// CHECK: math.fpowi %[[X]], %[[N32]] : f32, i32
func.func @powers(%x: f32, %n: i64) -> (f32, f32, f32, f32, f32) {
  %three = arith.constant 3.0 : f32
  %three_i = arith.constant 3 : i64
  %minus_two = arith.constant -2 : i64
  %half = arith.constant 1.5 : f32
  %a = math.powf %x, %three : f32
  %b = math.fpowi %x, %three_i : f32, i64
  %c = math.fpowi %x, %minus_two : f32, i64
  %d = math.powf %x, %half : f32
  %e = math.fpowi %x, %n : f32, i64
  return %a, %b, %c, %d, %e : f32, f32, f32, f32, f32
}

// -----

// kforge's own payload form is left as it is.
// CHECK-LABEL: func.func @gemm_bias_relu
// CHECK: linalg.matmul ins(
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
func.func @gemm_bias_relu(%A: tensor<8x16xf32>, %B: tensor<16x32xf32>, %bias: tensor<32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<8x32xf32>, tensor<32xf32>) outs(%empty : tensor<8x32xf32>) {
  ^bb0(%x: f32, %b: f32, %out: f32):
    %s = arith.addf %x, %b : f32
    %y = arith.maximumf %s, %zero : f32
    linalg.yield %y : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
