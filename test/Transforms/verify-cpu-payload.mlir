// RUN: kforge-opt %s -split-input-file -kforge-verify-cpu-payload -verify-diagnostics

func.func @gpu_mapped(%a: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'gpu.launch' is GPU code and cannot run on the CPU path}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

// Loops with GPU mapping attributes are fine: the CPU runs them sequentially.
func.func @forall_with_mapping(%a: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (8) {
    memref.store %zero, %a[%i] : memref<8xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}
