// RUN: kforge-opt %s -split-input-file -kforge-verify-gpu-payload -verify-diagnostics

// Work left on the host: on the GPU path its buffers are device memory.
func.func @unmapped(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'linalg.copy' reads or writes memory on the host, but on the GPU path every buffer is device memory}}
  linalg.copy ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

func.func @host_loop(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    // expected-error @+1 {{'memref.store' reads or writes memory on the host}}
    memref.store %zero, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// expected-error @+1 {{payload has no GPU kernel (no gpu.launch)}}
module {
  func.func @nothing_to_run(%a: memref<8xf32>) {
    return
  }
}

// -----

// Mapped work passes.
func.func @mapped(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<8xf32>
    memref.store %v, %b[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}
