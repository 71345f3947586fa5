// RUN: kforge-opt %s --split-input-file --kforge-bufferize | FileCheck %s

// Importer form: the returned tensor becomes a caller-provided output argument, with no allocation left.
// CHECK-LABEL: func.func @importer_form
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>) {
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[OUT]] : memref<8xf32>)
// CHECK: return{{$}}
#id = affine_map<(i) -> (i)>
func.func @importer_form(%a: tensor<8xf32>) -> tensor<8xf32> {
  %empty = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Destination-passing form: the output argument is written in place and the returned alias is dropped
// (no second output argument, no copy).
// CHECK-LABEL: func.func @destination_passing
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>) {
// CHECK-NOT: memref.copy
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[OUT]] : memref<8xf32>)
// CHECK: return{{$}}
#id = affine_map<(i) -> (i)>
func.func @destination_passing(%a: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%out : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
