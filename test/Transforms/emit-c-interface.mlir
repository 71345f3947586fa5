// RUN: kforge-opt %s -kforge-emit-c-interface | FileCheck %s

// CHECK-LABEL: func.func @public_fn
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @public_fn(%arg0: memref<4xf32>) {
  return
}

// CHECK-LABEL: func.func private @private_fn
// CHECK-NOT: llvm.emit_c_interface
func.func private @private_fn(%arg0: memref<4xf32>) {
  return
}

// CHECK-LABEL: func.func private @declaration
// CHECK-NOT: llvm.emit_c_interface
func.func private @declaration(%arg0: memref<4xf32>)
