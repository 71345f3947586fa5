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

// gpu.dynamic_shared_memory (whose verifier wants the workgroup attribute) becomes the address of one
// zero-sized external shared array, 1024-byte aligned, as a memref descriptor cast to memref<?xi8, 3>; views
// of it follow the numeric address space.
// CHECK: llvm.mlir.global external @__kforge_dynamic_shared() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: gpu.func @dynamic
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: %[[ADDR:.*]] = llvm.mlir.addressof @__kforge_dynamic_shared : !llvm.ptr<3>
// CHECK: llvm.insertvalue %[[ADDR]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[ADDR]], %{{.*}}[1]
// CHECK: %[[BASE:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr<3>, ptr<3>, i64, array<1 x i64>, array<1 x i64>)> to memref<?xi8, 3>
// CHECK: memref.view %[[BASE]][%{{.*}}][] : memref<?xi8, 3> to memref<2x16xf32, 3>
gpu.module @dynamic_kernels {
  gpu.func @dynamic(%g: memref<8xf32, #gpu.address_space<global>>) kernel {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %buffer = memref.view %base[%c128][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x16xf32, #gpu.address_space<workgroup>>
    %v = memref.load %g[%c0] : memref<8xf32, #gpu.address_space<global>>
    memref.store %v, %buffer[%c0, %c0] : memref<2x16xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}
