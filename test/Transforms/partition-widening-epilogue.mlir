// A contraction's epilogue keeps or narrows its precision; an op that widens its result to f64 (torch-mlir's
// layernorm statistics after a residual add) starts the row kernel that reduces it, so no f64 tensor passes
// between kernels (kforge-run verifies f32, f16 and bf16).
// RUN: kforge-opt %s --split-input-file --kforge-partition | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @proj_then_stats(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %r: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8xf64>) {
  %zero = arith.constant 0.0 : f32
  %zero64 = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %res = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %r : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %e64 = tensor.empty() : tensor<8x16xf64>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%res : tensor<8x16xf32>) outs(%e64 : tensor<8x16xf64>) {
  ^bb0(%a: f32, %o: f64):
    %w64 = arith.extf %a : f32 to f64
    linalg.yield %w64 : f64
  } -> tensor<8x16xf64>
  %s64 = tensor.empty() : tensor<8xf64>
  %sz = linalg.fill ins(%zero64 : f64) outs(%s64 : tensor<8xf64>) -> tensor<8xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%wide : tensor<8x16xf64>) outs(%sz : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %t = arith.addf %a, %o : f64
    linalg.yield %t : f64
  } -> tensor<8xf64>
  return %res, %sum : tensor<8x16xf32>, tensor<8xf64>
}

// The matmul and the residual add: one kernel with an f32 result.
// CHECK:      func.func private @[[MM:k_[0-9a-f]+]]({{.*}}) -> tensor<8x16xf32>
// CHECK-NOT:    arith.extf
// CHECK:        return
// The widening and its reduction: one row kernel, from the f32 values.
// CHECK:      func.func private @[[ROWS:k_[0-9a-f]+]](%{{.*}}: tensor<8x16xf32>) -> tensor<8xf64>
// CHECK:        arith.extf
// CHECK:        iterator_types = ["parallel", "reduction"]
// CHECK:      func.func @proj_then_stats(
// CHECK-NEXT:   %[[A:.*]] = call @[[MM]](
// CHECK-NEXT:   %[[B:.*]] = call @[[ROWS]](%[[A]])

// -----

// The same in a bf16 model: the matmul accumulates in f32, the residual add narrows to bf16, and the statistics
// extend the bf16 residual back to f32. That extension is no wider than the accumulator, but wider than the
// epilogue's value it reads: it starts the row kernel too (kept in the matmul's kernel, it was a second result
// that no schedule of the matmul mapped to the GPU: every candidate failed to compile).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @bf16_proj_then_stats(%x: tensor<8x16xbf16>, %w: tensor<16x16xbf16>, %r: tensor<8x16xbf16>)
    -> (tensor<8x16xbf16>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xbf16>, tensor<16x16xbf16>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %eb = tensor.empty() : tensor<8x16xbf16>
  %res = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %r : tensor<8x16xf32>, tensor<8x16xbf16>) outs(%eb : tensor<8x16xbf16>) {
  ^bb0(%a: f32, %b: bf16, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    %s = arith.addf %t, %b : bf16
    linalg.yield %s : bf16
  } -> tensor<8x16xbf16>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%res : tensor<8x16xbf16>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %w32 = arith.extf %a : bf16 to f32
    linalg.yield %w32 : f32
  } -> tensor<8x16xf32>
  %s32 = tensor.empty() : tensor<8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s32 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%wide : tensor<8x16xf32>) outs(%sz : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %res, %sum : tensor<8x16xbf16>, tensor<8xf32>
}

// CHECK:      func.func private @[[MM16:k_[0-9a-f]+]]({{.*}}) -> tensor<8x16xbf16>
// CHECK-NOT:    arith.extf %{{.*}} : bf16 to f32
// CHECK:        return
// CHECK:      func.func private @[[ROWS16:k_[0-9a-f]+]](%{{.*}}: tensor<8x16xbf16>) -> tensor<8xf32>
// CHECK:        arith.extf
// CHECK:        iterator_types = ["parallel", "reduction"]
// CHECK:      func.func @bf16_proj_then_stats(
// CHECK-NEXT:   %[[C:.*]] = call @[[MM16]](
// CHECK-NEXT:   %[[D:.*]] = call @[[ROWS16]](%[[C]])
