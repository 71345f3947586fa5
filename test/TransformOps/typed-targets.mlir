// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s
// A handle that also holds payload ops of another kind than the op takes: each of those fails (silenceably)
// with the op's own message, and the ops of the right kind are transformed all the same.

func.func @launch_and_func() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %both = transform.structured.match ops{["gpu.launch", "func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected a gpu.launch}}
    %same = transform.kforge.set_kernel_attributes %both {min_blocks_per_sm = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// The failure suppressed: the launch has its attribute.
// CHECK-LABEL: func.func @launch_and_func_suppressed
// CHECK: gpu.launch
// CHECK: } {kforge.min_blocks_per_sm = 2 : i64}
func.func @launch_and_func_suppressed() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %both = transform.structured.match ops{["gpu.launch", "func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.sequence %both : !transform.any_op failures(suppress) {
    ^bb0(%targets: !transform.any_op):
      %same = transform.kforge.set_kernel_attributes %targets {min_blocks_per_sm = 2} : (!transform.any_op) -> !transform.any_op
      transform.yield
    }
    transform.yield
  }
}
