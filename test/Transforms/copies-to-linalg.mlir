// RUN: kforge-opt %s -kforge-copies-to-linalg | FileCheck %s --check-prefix=ALL
// RUN: kforge-opt %s -kforge-copies-to-linalg=only-in-kernels=true | FileCheck %s --check-prefix=KERNELS

// ALL-LABEL: func.func @copies
// ALL: linalg.copy ins(%{{.*}} : memref<4x4xf32, strided<[8, 1]>>) outs(%{{.*}} : memref<4x4xf32>)
// ALL: gpu.launch
// ALL: linalg.copy
// ALL-NOT: memref.copy

// KERNELS-LABEL: func.func @copies
// KERNELS: memref.copy
// KERNELS: gpu.launch
// KERNELS: linalg.copy
func.func @copies(%a: memref<4x4xf32, strided<[8, 1]>>, %b: memref<4x4xf32>) {
  memref.copy %a, %b : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.copy %a, %b : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
    gpu.terminator
  }
  return
}
