// RUN: kforge-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(gpu.module(kforge-l2-load-policy))" | FileCheck %s
// RUN: rm -rf %t && kforge-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(gpu.module(kforge-invariant-input-loads,kforge-l2-load-policy),kforge-gpu-module-to-binary{format=isa},kforge-dump-gpu-binaries{dir=%t})" \
// RUN:   2>/dev/null > /dev/null; FileCheck %s --check-prefix=PTX --input-file=%t/asked.sm_90.ptx
// RUN: FileCheck %s --check-prefix=FIRST --input-file=%t/first.sm_90a.ptx
// RUN: not kforge-opt %s --split-input-file --pass-pipeline="builtin.module(kforge-gpu-module-to-binary{format=elf})" \
// RUN:   2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: kforge-gpu-module-to-binary: unknown format 'elf' (expected isa, bin or fatbin)

// kforge-l2-load-policy checks the request and records it as an LLVM function attribute (passthrough), next to
// those already there; kforge-gpu-module-to-binary then rewrites the loads in the optimised LLVM IR.
// CHECK-LABEL: llvm.func @asked
// CHECK-SAME: passthrough = ["nounwind", ["kforge-load-l2-policy", "evict_last"]]
// CHECK-NOT: kforge.load_l2_policy
// CHECK-LABEL: llvm.func @not_asked
// CHECK-NOT: passthrough

// The assembly has one policy register, made at the start. %in's four consecutive floats load as one 128-bit load
// (combined before the rewrite), two halves as one 32-bit register, a bf16 as a 16-bit one; %in is read-only
// (asked: .nc). %out is also stored to: its load carries the policy, without .nc. A byte load and a volatile
// load stay plain; so does the kernel that did not ask.
// PTX-LABEL: .entry asked(
// PTX: createpolicy.fractional.L2::evict_last.b64 [[P:%rd[0-9]+]], 1.0;
// PTX-DAG: ld.global.nc.L2::cache_hint.v4.b32 {{.*}}, [[P]];
// PTX-DAG: ld.global.nc.L2::cache_hint.b32 {{.*}}, [[P]];
// PTX-DAG: ld.global.nc.L2::cache_hint.b16 {{.*}}, [[P]];
// PTX-DAG: ld.global.L2::cache_hint.b32 {{.*}}, [[P]];
// PTX-DAG: ld.global.nc.b8
// PTX-DAG: ld.volatile.global.b32
// PTX-NOT: createpolicy
// PTX-LABEL: .entry not_asked(
// PTX-NOT: cache_hint
// PTX: ld.global.b32
gpu.module @asked [#nvvm.target<chip = "sm_90">] {
  llvm.func @asked(%in: !llvm.ptr {llvm.align = 16 : i64}, %out: !llvm.ptr {llvm.align = 16 : i64}, %i: i64)
      attributes {gpu.kernel, nvvm.kernel, kforge.read_only_inputs, kforge.load_l2_policy = "evict_last",
                  passthrough = ["nounwind"]} {
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %base = llvm.mul %i, %c4 : i64
    %p0 = llvm.getelementptr inbounds %in[%base] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %p1 = llvm.getelementptr inbounds %p0[1] : (!llvm.ptr) -> !llvm.ptr, f32
    %p2 = llvm.getelementptr inbounds %p0[2] : (!llvm.ptr) -> !llvm.ptr, f32
    %p3 = llvm.getelementptr inbounds %p0[3] : (!llvm.ptr) -> !llvm.ptr, f32
    %x0 = llvm.load %p0 {alignment = 16 : i64} : !llvm.ptr -> f32
    %x1 = llvm.load %p1 {alignment = 4 : i64} : !llvm.ptr -> f32
    %x2 = llvm.load %p2 {alignment = 8 : i64} : !llvm.ptr -> f32
    %x3 = llvm.load %p3 {alignment = 4 : i64} : !llvm.ptr -> f32
    %s01 = llvm.fadd %x0, %x1 : f32
    %s23 = llvm.fadd %x2, %x3 : f32
    %s = llvm.fadd %s01, %s23 : f32
    %q = llvm.getelementptr inbounds %in[64] : (!llvm.ptr) -> !llvm.ptr, f32
    %y = llvm.load %q {alignment = 16 : i64} : !llvm.ptr -> f32
    %qh = llvm.getelementptr inbounds %in[68] : (!llvm.ptr) -> !llvm.ptr, f32
    %h = llvm.load %qh {alignment = 16 : i64} : !llvm.ptr -> vector<2xf16>
    %qb = llvm.getelementptr inbounds %in[72] : (!llvm.ptr) -> !llvm.ptr, f32
    %b = llvm.load %qb {alignment = 16 : i64} : !llvm.ptr -> bf16
    %qc = llvm.getelementptr inbounds %in[76] : (!llvm.ptr) -> !llvm.ptr, f32
    %c = llvm.load %qc {alignment = 16 : i64} : !llvm.ptr -> i8
    %o = llvm.load %out {alignment = 4 : i64} : !llvm.ptr -> f32
    %w = llvm.load volatile %out {alignment = 4 : i64} : !llvm.ptr -> f32
    %h0 = llvm.extractelement %h[%i : i64] : vector<2xf16>
    %hf = llvm.fpext %h0 : f16 to f32
    %bf = llvm.fpext %b : bf16 to f32
    %cf = llvm.uitofp %c : i8 to f32
    %t0 = llvm.fadd %s, %y : f32
    %t1 = llvm.fadd %t0, %hf : f32
    %t2 = llvm.fadd %t1, %bf : f32
    %t3 = llvm.fadd %t2, %cf : f32
    %t4 = llvm.fadd %t3, %o : f32
    %t5 = llvm.fadd %t4, %w : f32
    llvm.store %t5, %out {alignment = 4 : i64} : f32, !llvm.ptr
    llvm.return
  }
  llvm.func @not_asked(%in: !llvm.ptr, %out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %x = llvm.load %in : !llvm.ptr -> f32
    llvm.store %x, %out : f32, !llvm.ptr
    llvm.return
  }
}

// -----

// evict_first: the policy register says so. A load from shared memory (not an argument) stays plain.
// CHECK-LABEL: llvm.func @first
// CHECK-SAME: passthrough = {{\[\[}}"kforge-load-l2-policy", "evict_first"]]
// FIRST: createpolicy.fractional.L2::evict_first.b64 [[P:%rd[0-9]+]], 1.0;
// FIRST-DAG: ld.global.L2::cache_hint.b32 {{.*}}, [[P]];
// FIRST-DAG: ld.volatile.shared.b32
gpu.module @first [#nvvm.target<chip = "sm_90a">] {
  llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<4 x f32>
  llvm.func @first(%in: !llvm.ptr, %out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, kforge.load_l2_policy = "evict_first"} {
    %x = llvm.load %in : !llvm.ptr -> f32
    %t = llvm.mlir.addressof @tile : !llvm.ptr<3>
    %y = llvm.load volatile %t : !llvm.ptr<3> -> f32
    %z = llvm.fadd %x, %y : f32
    llvm.store %z, %out : f32, !llvm.ptr
    llvm.return
  }
}

// -----

gpu.module @kernels [#nvvm.target<chip = "sm_75">] {
  // expected-error @below {{an L2 load policy needs sm_80 or later (createpolicy); the target is sm_75}}
  llvm.func @old(%in: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, kforge.load_l2_policy = "evict_last"} {
    %x = llvm.load %in : !llvm.ptr -> f32
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{unknown L2 load policy 'evict_normal' (expected evict_first or evict_last)}}
  llvm.func @unknown(%in: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, kforge.load_l2_policy = "evict_normal"} {
    %x = llvm.load %in : !llvm.ptr -> f32
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{'kforge.load_l2_policy' must be a string (evict_first or evict_last)}}
  llvm.func @not_string(%in: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, kforge.load_l2_policy} {
    %x = llvm.load %in : !llvm.ptr -> f32
    llvm.return
  }
}

// -----

// A bulk copy from global into shared memory (pipeline_rows' row) takes the policy as its L2 cache hint; one
// that has a hint already keeps it, and an L2 prefetch gets none.
// CHECK-LABEL: llvm.func @bulk
// CHECK: %[[H:.*]] = llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} l2_cache_hint = %[[H]] :
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} l2_cache_hint = %arg3 :
// CHECK: nvvm.cp.async.bulk.prefetch %{{.*}}, %{{.*}} :
gpu.module @bulk [#nvvm.target<chip = "sm_90">] {
  llvm.func @bulk(%src: !llvm.ptr<1>, %dst: !llvm.ptr<7>, %bar: !llvm.ptr<3>, %own: i64)
      attributes {gpu.kernel, nvvm.kernel, kforge.load_l2_policy = "evict_first"} {
    %n = llvm.mlir.constant(16384 : i32) : i32
    nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %n : !llvm.ptr<7>, !llvm.ptr<1>
    nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %n l2_cache_hint = %own : !llvm.ptr<7>, !llvm.ptr<1>
    nvvm.cp.async.bulk.prefetch %src, %n : !llvm.ptr<1>
    llvm.return
  }
}
