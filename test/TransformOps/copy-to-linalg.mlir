// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// The copy becomes a linalg.copy, which the handle returned lets us tile (here row by row).
// CHECK-LABEL: func.func @copy
// CHECK-NOT: memref.copy
// CHECK: scf.for
// CHECK: linalg.copy ins(%{{.*}} : memref<1x4xf32, strided<[8, 1], offset: ?>>) outs(%{{.*}} : memref<1x4xf32, strided<[4, 1], offset: ?>, 3>)
func.func @copy(%a: memref<4x4xf32, strided<[8, 1]>>, %b: memref<4x4xf32, 3>) {
  memref.copy %a, %b : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32, 3>
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %copy = transform.structured.match ops{["memref.copy"]} in %root : (!transform.any_op) -> !transform.any_op
    %linalg = transform.kforge.copy_to_linalg %copy : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_for %linalg tile_sizes [1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

func.func @not_a_copy(%a: memref<4xf32>) {
  memref.dealloc %a : memref<4xf32>
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["memref.dealloc"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected a memref.copy between ranked memrefs}}
    %linalg = transform.kforge.copy_to_linalg %op : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
