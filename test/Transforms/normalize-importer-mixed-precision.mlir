// RUN: kforge-opt %s -split-input-file -kforge-normalize-importer | FileCheck %s

// torch-mlir's bf16 nn.Linear + GELU: the input and the transposed weight are extended to f32 before an f32
// matmul, and the GELU, computed in bf16, is extended at its end for the next matmul. The matmuls read the
// bf16 tensors themselves (bf16 inputs, f32 accumulation: the same values, and the form mma / wgmma take),
// the weight through the transposed map; the GELU's result stays bf16.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @mlp_bf16(
// CHECK-SAME: %[[X:.*]]: tensor<16x64xbf16>, %[[W1:.*]]: tensor<128x64xbf16>, %[[B1:.*]]: tensor<128xbf16>, %[[W2:.*]]: tensor<32x128xbf16>
// CHECK: %[[MM1:.*]] = linalg.matmul indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]] ins(%[[X]], %[[W1]] : tensor<16x64xbf16>, tensor<128x64xbf16>) outs({{.*}} : tensor<16x128xf32>)
// CHECK: %[[GELU:.*]] = linalg.generic {{.*}} ins(%[[MM1]], %[[B1]] : tensor<16x128xf32>, tensor<128xbf16>) outs({{.*}} : tensor<16x128xbf16>)
// CHECK: math.erf {{.*}} : bf16
// CHECK-NOT: arith.extf {{.*}} : bf16 to f32
// CHECK: linalg.yield {{.*}} : bf16
// CHECK: linalg.matmul indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]] ins(%[[GELU]], %[[W2]] : tensor<16x128xbf16>, tensor<32x128xbf16>) outs({{.*}} : tensor<16x32xf32>)
// CHECK-NOT: linalg.generic {{.*}}ins(%[[W2]]
func.func @mlp_bf16(%x: tensor<16x64xbf16>, %w1: tensor<128x64xbf16>, %b1: tensor<128xbf16>, %w2: tensor<32x128xbf16>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : bf16
  %e0 = tensor.empty() : tensor<64x128xbf16>
  %w1t = linalg.transpose ins(%w1 : tensor<128x64xbf16>) outs(%e0 : tensor<64x128xbf16>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<16x64xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x64xbf16>) outs(%e1 : tensor<16x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %w1f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w1t : tensor<64x128xbf16>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %e3 = tensor.empty() : tensor<16x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x128xf32>) -> tensor<16x128xf32>
  %mm = linalg.matmul ins(%xf, %w1f : tensor<16x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<16x128xf32>) -> tensor<16x128xf32>
  %gelu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %b1 : tensor<16x128xf32>, tensor<128xbf16>) outs(%e3 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %bias: bf16, %out: f32):
    %bf = arith.extf %bias : bf16 to f32
    %s = arith.addf %in, %bf : f32
    %h = arith.truncf %s : f32 to bf16
    %q = arith.divf %h, %two : bf16
    %r = math.erf %q : bf16
    %g = arith.mulf %h, %r : bf16
    %back = arith.extf %g : bf16 to f32
    linalg.yield %back : f32
  } -> tensor<16x128xf32>
  %e4 = tensor.empty() : tensor<128x32xbf16>
  %w2t = linalg.transpose ins(%w2 : tensor<32x128xbf16>) outs(%e4 : tensor<128x32xbf16>) permutation = [1, 0]
  %e5 = tensor.empty() : tensor<128x32xf32>
  %w2f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w2t : tensor<128x32xbf16>) outs(%e5 : tensor<128x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<128x32xf32>
  %e6 = tensor.empty() : tensor<16x32xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %out = linalg.matmul ins(%gelu, %w2f : tensor<16x128xf32>, tensor<128x32xf32>) outs(%acc2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %out : tensor<16x32xf32>
}

// -----

// An extended result that something else reads too (here the function returns it) is not narrowed: the
// matmul keeps its f32 inputs, as the importer wrote them.
// CHECK-LABEL: func.func @shared_extension(
// CHECK: %[[EXT:.*]] = linalg.generic {{.*}} outs({{.*}} : tensor<8x8xf32>)
// CHECK: linalg.matmul ins(%[[EXT]], %[[EXT]] : tensor<8x8xf32>, tensor<8x8xf32>)
func.func @shared_extension(%x: tensor<8x8xbf16>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : bf16
  %e = tensor.empty() : tensor<8x8xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xbf16>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %s = arith.addf %in, %one : bf16
    %v = arith.extf %s : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = linalg.matmul ins(%xf, %xf : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %mm, %xf : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// One operand bf16, the other f32: not a mixed-precision contraction the tensor cores take; left alone.
// CHECK-LABEL: func.func @bf16_times_f32(
// CHECK: %[[EXT:.*]] = linalg.generic
// CHECK: linalg.matmul ins(%[[EXT]], %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)
func.func @bf16_times_f32(%x: tensor<8x8xbf16>, %y: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xbf16>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = linalg.matmul ins(%xf, %y : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %mm : tensor<8x8xf32>
}

// -----

// Attention's heads: a bf16 view that moves the batch dimension ((seq, heads, dim) -> (heads, seq, dim)) is
// not a batch_matmul map; it stays a copy, while the other operand's extension folds.
// CHECK-LABEL: func.func @heads_transpose(
// CHECK-SAME: %[[Q:.*]]: tensor<8x2x4xbf16>, %[[K:.*]]: tensor<2x4x8xbf16>
// CHECK: %[[HEADS:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<8x2x4xbf16>) outs({{.*}} : tensor<2x8x4xbf16>)
// CHECK: linalg.batch_matmul ins(%[[HEADS]], %[[K]] : tensor<2x8x4xbf16>, tensor<2x4x8xbf16>) outs({{.*}} : tensor<2x8x8xf32>)
func.func @heads_transpose(%q: tensor<8x2x4xbf16>, %k: tensor<2x4x8xbf16>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x8x4xf32>
  %qf = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<8x2x4xbf16>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<2x8x4xf32>
  %e2 = tensor.empty() : tensor<2x4x8xf32>
  %kf = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x8xbf16>) outs(%e2 : tensor<2x4x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<2x4x8xf32>
  %e3 = tensor.empty() : tensor<2x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%qf, %kf : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%acc : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %s : tensor<2x8x8xf32>
}

// -----

// A contraction written as a generic, its bf16 operands extended inside the body (mixed precision written
// out): the named matmul of the bf16 operands with f32 accumulation, which the tensor-core schedules take (as a
// generic it was scheduled as a row reduction, and mma / wgmma were never proposed).
// CHECK-LABEL: func.func @generic_extf_matmul(
// CHECK-SAME: %[[A:.*]]: tensor<32x64xbf16>, %[[B:.*]]: tensor<64x16xbf16>
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<32x64xbf16>, tensor<64x16xbf16>) outs({{.*}} : tensor<32x16xf32>)
// CHECK-NOT: linalg.generic
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @generic_extf_matmul(%A: tensor<32x64xbf16>, %B: tensor<64x16xbf16>) -> tensor<32x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<32x64xbf16>, tensor<64x16xbf16>) outs(%f : tensor<32x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x16xf32>
  return %r : tensor<32x16xf32>
}

// -----

// The same with a batch loop: a batch_matmul. A matvec-shaped contraction (no N loop) stays a generic.
// CHECK-LABEL: func.func @generic_extf_batch_matmul(
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x32x64xbf16>, tensor<4x64x16xbf16>) outs({{.*}} : tensor<4x32x16xf32>)
// CHECK-LABEL: func.func @generic_matvec(
// CHECK: linalg.generic
#ba = affine_map<(b, m, n, k) -> (b, m, k)>
#bb = affine_map<(b, m, n, k) -> (b, k, n)>
#bc = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @generic_extf_batch_matmul(%A: tensor<4x32x64xbf16>, %B: tensor<4x64x16xbf16>) -> tensor<4x32x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  %r = linalg.generic {indexing_maps = [#ba, #bb, #bc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<4x32x64xbf16>, tensor<4x64x16xbf16>) outs(%f : tensor<4x32x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x32x16xf32>
  return %r : tensor<4x32x16xf32>
}
#va = affine_map<(m, k) -> (m, k)>
#vb = affine_map<(m, k) -> (k)>
#vc = affine_map<(m, k) -> (m)>
func.func @generic_matvec(%A: tensor<32x64xf32>, %x: tensor<64xf32>) -> tensor<32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %r = linalg.generic {indexing_maps = [#va, #vb, #vc], iterator_types = ["parallel", "reduction"]}
      ins(%A, %x : tensor<32x64xf32>, tensor<64xf32>) outs(%f : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// A contraction generic reading A as K x M and B as N x K: the named matmul keeps the maps (as a folded
// transpose does), so mma (B as N x K) and wgmma (A as K x M) see the layouts.
// CHECK-DAG: #[[$AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$BT2:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C2:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @generic_transposed(
// CHECK: linalg.matmul indexing_maps = [#[[$AT]], #[[$BT2]], #[[$C2]]] ins(%{{.*}}, %{{.*}} : tensor<64x32xbf16>, tensor<16x64xbf16>) outs({{.*}} : tensor<32x16xf32>)
// CHECK-NOT: linalg.generic
#ta = affine_map<(m, n, k) -> (k, m)>
#tb = affine_map<(m, n, k) -> (n, k)>
#tc = affine_map<(m, n, k) -> (m, n)>
func.func @generic_transposed(%A: tensor<64x32xbf16>, %B: tensor<16x64xbf16>) -> tensor<32x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %r = linalg.generic {indexing_maps = [#ta, #tb, #tc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<64x32xbf16>, tensor<16x64xbf16>) outs(%f : tensor<32x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x16xf32>
  return %r : tensor<32x16xf32>
}
