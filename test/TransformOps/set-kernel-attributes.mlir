// RUN: kforge-opt %s -split-input-file -transform-interpreter -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @bounded
// CHECK: gpu.launch
// CHECK: } {kforge.max_registers = 128 : i64, kforge.min_blocks_per_sm = 2 : i64}
func.func @bounded(%a: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %z = arith.constant 0.0 : f32
    memref.store %z, %a[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    %same = transform.kforge.set_kernel_attributes %launch {min_blocks_per_sm = 2, max_registers = 128}
      : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// CHECK-LABEL: func.func @streaming
// CHECK: gpu.launch
// CHECK: } {kforge.load_l2_policy = "evict_last", kforge.read_only_inputs, kforge.streaming_stores}
func.func @streaming(%a: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %z = arith.constant 0.0 : f32
    memref.store %z, %a[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    %same = transform.kforge.set_kernel_attributes %launch {streaming_stores, read_only_inputs, load_l2_policy = "evict_last"} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

func.func @not_a_launch(%a: memref<4xf32>) {
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected a gpu.launch}}
    %same = transform.kforge.set_kernel_attributes %func {min_blocks_per_sm = 2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @+1 {{needs at least one of min_blocks_per_sm, max_registers, streaming_stores, read_only_inputs and load_l2_policy}}
    %same = transform.kforge.set_kernel_attributes %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @+1 {{max_registers must be in 1..255}}
    %same = transform.kforge.set_kernel_attributes %root {max_registers = 300} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @+1 {{load_l2_policy must be "evict_first" or "evict_last", not "evict_normal"}}
    %same = transform.kforge.set_kernel_attributes %root {load_l2_policy = "evict_normal"} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
