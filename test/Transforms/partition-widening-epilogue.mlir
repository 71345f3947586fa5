// A contraction's epilogue keeps or narrows its precision; an op that widens its result to f64 (torch-mlir's
// layernorm statistics after a residual add) starts the row kernel that reduces it, so no f64 tensor passes
// between kernels (kforge-run verifies f32, f16 and bf16).
// RUN: kforge-opt %s --kforge-partition | FileCheck %s

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
