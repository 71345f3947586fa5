// RUN: kforge-opt %s -split-input-file -kforge-drop-argument-results | FileCheck %s

// A destination-passing function returning its output argument: the result goes.
// CHECK-LABEL: func.func @returns_argument
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) {
// CHECK: return{{$}}
func.func @returns_argument(%in: memref<4xf32>, %out: memref<4xf32>) -> memref<4xf32> {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return %out : memref<4xf32>
}

// -----

// Looking through memref.cast.
// CHECK-LABEL: func.func @returns_cast_argument
// CHECK-SAME: (%{{.*}}: memref<4xf32>) {
// CHECK: return{{$}}
func.func @returns_cast_argument(%out: memref<4xf32>) -> memref<4xf32, strided<[?], offset: ?>> {
  %c = memref.cast %out : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
  return %c : memref<4xf32, strided<[?], offset: ?>>
}

// -----

// A fresh allocation is a real result and stays.
// CHECK-LABEL: func.func @returns_allocation
// CHECK-SAME: -> memref<4xf32>
// CHECK: return %[[ALLOC:.*]] : memref<4xf32>
func.func @returns_allocation() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

// Functions with callers in the module are left alone.
// CHECK-LABEL: func.func @called
// CHECK-SAME: -> memref<4xf32>
func.func @called(%out: memref<4xf32>) -> memref<4xf32> {
  return %out : memref<4xf32>
}
func.func @caller(%out: memref<4xf32>) {
  %r = func.call @called(%out) : (memref<4xf32>) -> memref<4xf32>
  return
}
