// RUN: kforge-opt %s -split-input-file -kforge-host-allocs-to-device -verify-diagnostics | FileCheck %s

// A temporary between two kernels becomes device memory, freed before the function returns.
// gpu-to-llvm lowers only the asynchronous forms, so each is bracketed by waits.
// CHECK-LABEL: func.func @temporary
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[TMP:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<8xf32>
// CHECK: gpu.wait [%[[T1]]]
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: %[[T2:.*]] = gpu.wait async
// CHECK: %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[TMP]] : memref<8xf32>
// CHECK: gpu.wait [%[[T3]]]
// CHECK-NEXT: return
func.func @temporary(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tmp = memref.alloc() : memref<8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<8xf32>
    memref.store %v, %tmp[%tx] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %tmp[%tx] : memref<8xf32>
    memref.store %v, %b[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}

// -----

// An existing dealloc is kept in place, as a device free.
// CHECK-LABEL: func.func @explicit_free
// CHECK: %[[TMP:.*]], %{{.*}} = gpu.alloc async
// CHECK: gpu.dealloc async [%{{.*}}] %[[TMP]]
// CHECK-NOT: memref.dealloc
func.func @explicit_free() {
  %tmp = memref.alloc() : memref<8xf32>
  memref.dealloc %tmp : memref<8xf32>
  return
}

// -----

func.func @escapes() -> memref<8xf32> {
  // expected-error @+1 {{allocation escapes its function, so its device memory could never be freed}}
  %out = memref.alloc() : memref<8xf32>
  return %out : memref<8xf32>
}
