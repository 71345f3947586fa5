// RUN: kforge-opt %s -split-input-file -verify-diagnostics -kforge-verify-no-foreign-code | FileCheck %s
//
// kforge-compile runs this first on every artifact: code that kforge does not compile itself (assembly,
// calls of declared-only or computed targets) never reaches a kernel or the host code around it.

// CHECK-LABEL: func.func @clean
// CHECK: call @helper
func.func private @helper(%x: f32) -> f32 {
  return %x : f32
}
func.func @clean(%x: f32) -> f32 {
  %y = func.call @helper(%x) : (f32) -> f32
  return %y : f32
}

// -----

func.func @asm() {
  // expected-error @below {{inline assembly is not allowed in a payload or schedule}}
  llvm.inline_asm has_side_effects "syscall", "" : () -> ()
  return
}

// -----

// The allowed arrive with one instruction more is foreign code.
func.func @asm_arrive_and_more(%p: i32, %bar: i32) {
  // expected-error @below {{inline assembly is not allowed in a payload or schedule}}
  llvm.inline_asm has_side_effects "{\0A\09.reg .pred p;\0A\09.reg .b64 state;\0A\09setp.ne.b32 p, $0, 0;\0A\09@p mbarrier.arrive.shared.b64 state, [$1];\0A\09}\0Atrap;", "r,r,~{memory}" %p, %bar : (i32, i32) -> ()
  return
}

// -----

func.func private @system(i64) -> i32
func.func @external() {
  %c = arith.constant 0 : i64
  // expected-error @below {{a call to 'system', which the module declares but does not define, is not allowed}}
  %r = func.call @system(%c) : (i64) -> i32
  return
}

// -----

llvm.func @write(i32, !llvm.ptr, i64) -> i64
llvm.func @llvm_external(%p: !llvm.ptr) {
  %fd = llvm.mlir.constant(3 : i32) : i32
  %n = llvm.mlir.constant(8 : i64) : i64
  // expected-error @below {{a call to 'write', which the module declares but does not define, is not allowed}}
  %r = llvm.call @write(%fd, %p, %n) : (i32, !llvm.ptr, i64) -> i64
  llvm.return
}

// -----

llvm.func @indirect(%f: !llvm.ptr) {
  // expected-error @below {{indirect calls are not allowed in a payload or schedule}}
  llvm.call %f() : !llvm.ptr, () -> ()
  llvm.return
}

// -----

// expected-error @below {{module-level assembly ('llvm.module_asm') is not allowed in a payload or schedule}}
module attributes {llvm.module_asm = ["call_me: ret"]} {
}

// -----

// What kforge's own transform ops emit: a compiler memory barrier (empty assembly), warp_specialize's
// predicated mbarrier arrive (exactly that string: include/kforge/Transforms/KernelAssembly.h) and calls into
// kforge's runtime (kforge_tensor_map_2d for TMA).
// CHECK-LABEL: func.func @kforge_forms
// CHECK: llvm.inline_asm
// CHECK: llvm.inline_asm has_side_effects "{{.*}}@p mbarrier.arrive.shared.b64 state
// CHECK: call @kforge_tensor_map_2d
func.func private @kforge_tensor_map_2d(i64) -> i64
func.func @kforge_forms(%x: i64, %p: i32, %bar: i32) -> i64 {
  llvm.inline_asm has_side_effects "", "~{memory}" : () -> ()
  llvm.inline_asm has_side_effects "{\0A\09.reg .pred p;\0A\09.reg .b64 state;\0A\09setp.ne.b32 p, $0, 0;\0A\09@p mbarrier.arrive.shared.b64 state, [$1];\0A\09}", "r,r,~{memory}" %p, %bar : (i32, i32) -> ()
  %m = func.call @kforge_tensor_map_2d(%x) : (i64) -> i64
  return %m : i64
}
