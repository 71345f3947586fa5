// RUN: kforge-opt %s -split-input-file -kforge-streaming-stores=assembled=false -verify-diagnostics | FileCheck %s

// PTX for the driver's JIT (assembled=false): nothing can carry the request, so the pass says so and leaves
// the target alone (the request attribute still goes).
// CHECK-LABEL: gpu.module @jit
// CHECK-SAME: [#nvvm.target<chip = "sm_90">]
// CHECK-NOT: kforge.streaming_stores
module attributes {gpu.container_module} {
  gpu.module @jit [#nvvm.target<chip = "sm_90">] {
    // expected-warning@+1 {{streaming stores take effect when ptxas assembles the kernel (format=bin or fatbin); this PTX keeps the default store cache operator}}
    gpu.func @jit(%a: memref<256xf32>) kernel attributes {kforge.streaming_stores} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error@+1 {{kernel 'orphan' asks for streaming stores, but its module has no NVVM target (run after nvvm-attach-target)}}
  gpu.module @orphan {
    gpu.func @orphan(%a: memref<256xf32>) kernel attributes {kforge.streaming_stores} {
      gpu.return
    }
  }
}
