// RUN: kforge-opt %s -split-input-file -verify-diagnostics -kforge-verify-artifact-calls | FileCheck %s
//
// Lowered host code of an artifact may call its own functions, kforge's runtime, the C allocator and
// memory functions, libm, and what cf.assert lowers to (puts, abort); nothing else.

// CHECK-LABEL: llvm.func @allowed
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
llvm.func @expf(f32) -> f32
llvm.func @allowed(%n: i64, %x: f32) -> f32 {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %z = llvm.mlir.zero : !llvm.ptr
  %b = llvm.mlir.constant(0 : i8) : i8
  %d = llvm.call @mgpuMemAlloc(%n, %z, %b) : (i64, !llvm.ptr, i8) -> !llvm.ptr
  %e = llvm.call @expf(%x) : (f32) -> f32
  llvm.return %e : f32
}

// -----

// A failed cf.assert (torch-mlir's bounds checks of class indices) prints its message and aborts.
// CHECK-LABEL: llvm.func @assert_failed
llvm.func @puts(!llvm.ptr) -> i32
llvm.func @abort()
llvm.func @assert_failed(%message: !llvm.ptr) {
  %r = llvm.call @puts(%message) : (!llvm.ptr) -> i32
  llvm.call @abort() : () -> ()
  llvm.unreachable
}

// -----

llvm.func @system(!llvm.ptr) -> i32
llvm.func @shell(%cmd: !llvm.ptr) {
  // expected-error @below {{host code calls 'system', which is neither kforge's runtime nor the C library functions its lowering uses}}
  %r = llvm.call @system(%cmd) : (!llvm.ptr) -> i32
  llvm.return
}

// -----

llvm.func @indirect(%f: !llvm.ptr) {
  // expected-error @below {{host code makes an indirect call, which kforge's lowering never emits}}
  llvm.call %f() : !llvm.ptr, () -> ()
  llvm.return
}

// -----

llvm.func @asm() {
  // expected-error @below {{inline assembly is not allowed in a payload or schedule}}
  llvm.inline_asm has_side_effects "syscall", "" : () -> ()
  llvm.return
}
