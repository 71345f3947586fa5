// kforge-partition: a function of many ops becomes dispatch functions called in order. Here two linear
// layers of the same shape (matmul + bias + relu: one dispatch each, the epilogue fused) become one function
// called twice; the row softmax (two reductions and the elementwise ops over the same rows) is one dispatch;
// the reshape after it stays in the entry; constants and fills are copied into the dispatches.
// RUN: kforge-opt %s --kforge-partition | FileCheck %s
// RUN: rm -rf %t && kforge-opt %s --kforge-partition=split-dir=%t -o /dev/null
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/plan.json
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// RUN: kforge-opt %t/$(ls %t | grep -m1 '^k_') | FileCheck %s --check-prefix=PAYLOAD

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @block(%x: tensor<16x32xf32>, %w1: tensor<32x32xf32>, %b1: tensor<32xf32>,
                 %w2: tensor<32x32xf32>, %b2: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1 : tensor<16x32xf32>, tensor<32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %b2 : tensor<16x32xf32>, tensor<32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %re = tensor.empty() : tensor<16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sum : tensor<16x32xf32>) outs(%minit : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %max : tensor<16x32xf32>, tensor<16xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<16xf32>) -> tensor<16xf32>
  %den = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<16x32xf32>) outs(%sinit : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %soft = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %den : tensor<16x32xf32>, tensor<16xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %out = tensor.expand_shape %soft [[0, 1], [2]] output_shape [2, 8, 32] : tensor<16x32xf32> into tensor<2x8x32xf32>
  return %out : tensor<2x8x32xf32>
}

// The linear layer: one function (identical dispatches are one), its fill and constant copied in.
// CHECK:      func.func private @[[LINEAR:k_[0-9a-f]{16}]](%{{.*}}: tensor<16x32xf32>, %{{.*}}: tensor<32x32xf32>, %{{.*}}: tensor<32xf32>) -> tensor<16x32xf32>
// CHECK:        arith.constant 0.0
// CHECK:        linalg.fill
// CHECK:        linalg.matmul
// CHECK:        linalg.generic
// CHECK:        return
// CHECK-NOT:  linalg.matmul
// The softmax's reductions and elementwise ops over the same rows: one kernel.
// CHECK:      func.func private @[[SOFTMAX:k_[0-9a-f]{16}]](%{{.*}}: tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK-COUNT-2: iterator_types = ["parallel", "reduction"]
// CHECK:        return
// CHECK:      func.func @block(
// CHECK-NEXT:   %[[A:.*]] = call @[[LINEAR]](%arg0, %arg1, %arg2)
// CHECK-NEXT:   %[[B:.*]] = call @[[LINEAR]](%[[A]], %arg3, %arg4)
// CHECK-NEXT:   %[[S:.*]] = call @[[SOFTMAX]](%[[B]])
// CHECK-NEXT:   %[[R:.*]] = tensor.expand_shape %[[S]]
// CHECK-NEXT:   return %[[R]]

// PLAN: "arguments": [
// PLAN: "dispatches": [
// PLAN: "name": "k_
// PLAN: "payload": "k_{{[0-9a-f]+}}.mlir"
// PLAN: "entry": "block"
// PLAN: "format": "kforge-partition/1"
// PLAN: "outputs": [
// PLAN-NEXT: 8
// PLAN: "steps": [
// PLAN: "dispatch": 0
// PLAN: "kind": "dispatch"
// PLAN: "operands": [
// PLAN-NEXT: 0,
// PLAN: "dispatch": 0
// PLAN: "kind": "dispatch"
// PLAN: "operands": [
// PLAN-NEXT: 5,
// PLAN: "dispatch": 1
// PLAN: "kind": "dispatch"
// PLAN: "kind": "reshape"

// FILES: k_{{[0-9a-f]+}}.mlir
// FILES-NEXT: k_{{[0-9a-f]+}}.mlir
// FILES-NEXT: plan.json

// PAYLOAD: func.func @k_
// PAYLOAD-NOT: private
