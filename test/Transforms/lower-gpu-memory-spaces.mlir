// RUN: kforge-opt %s -pass-pipeline='builtin.module(gpu.module(kforge-lower-gpu-memory-spaces))' | FileCheck %s

// CHECK-LABEL: gpu.func @kernel
// CHECK-SAME: workgroup(%[[S:.*]] : memref<64xf32, 3>)
// CHECK-SAME: private(%[[P:.*]] : memref<4xf32, 5>)
// CHECK: memref.load %{{.*}} : memref<8xf32, 1>
// CHECK: memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<64xf32, 3>
gpu.module @kernels {
  gpu.func @kernel(%g: memref<8xf32, #gpu.address_space<global>>)
      workgroup(%s : memref<64xf32, #gpu.address_space<workgroup>>)
      private(%p : memref<4xf32, #gpu.address_space<private>>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %g[%c0] : memref<8xf32, #gpu.address_space<global>>
    memref.store %v, %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}
