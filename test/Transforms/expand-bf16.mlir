// RUN: kforge-opt %s --kforge-expand-bf16 | FileCheck %s

// bf16 rounding and widening become integer arithmetic (no __truncsfbf2 call in a CPU kernel library).
// CHECK-LABEL: func.func @round_trip
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast
func.func @round_trip(%x: f32) -> f32 {
  %b = arith.truncf %x : f32 to bf16
  %y = arith.extf %b : bf16 to f32
  return %y : f32
}
