// kforge-partition refuses what it cannot place, with an error on the op, never a crash.
// RUN: kforge-opt %s --kforge-partition -split-input-file -verify-diagnostics
// RUN: not kforge-opt %s --kforge-partition=entry=missing -split-input-file 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: error: kforge-partition: no function @missing

// expected-error @+1 {{kforge-partition: several public functions; name one with entry=}}
module {
  func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
  func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
}

// -----

// A scalar read back from a tensor on the host is not a kernel's work.
func.func @scalar(%x: tensor<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{kforge-partition: a top-level op without tensor results (tensor.extract) cannot be placed in a dispatch}}
  %v = tensor.extract %x[%c0] : tensor<4xf32>
  return %v : f32
}

// -----

func.func @constant() -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{kforge-partition: returns a constant tensor; no dispatch computes it}}
  return %c : tensor<4xf32>
}

