// RUN: kforge-opt %s --pass-pipeline="builtin.module(gpu.module(kforge-invariant-input-loads))" | FileCheck %s

// A kernel that asked for read-only inputs: loads from %in (directly and through address arithmetic) become
// invariant; %out is stored to, %escaped is cast to an integer (a bulk copy's address, say), %ordered is read
// volatile: their loads stay as they were. The request attribute goes.
// CHECK-LABEL: llvm.func @asked
// CHECK-NOT: kforge.read_only_inputs
// CHECK: llvm.load %{{.*}} invariant : !llvm.ptr -> f32
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.load %arg1 : !llvm.ptr -> f32
// CHECK: llvm.load %arg2 : !llvm.ptr -> f32
// CHECK: llvm.load %arg3 : !llvm.ptr -> f32
// CHECK: llvm.load volatile %arg3 : !llvm.ptr -> f32
// CHECK-LABEL: llvm.func @not_asked
// CHECK: llvm.load %arg0 : !llvm.ptr -> f32
gpu.module @kernels {
  llvm.func @asked(%in: !llvm.ptr, %out: !llvm.ptr, %escaped: !llvm.ptr, %ordered: !llvm.ptr, %i: i64)
      attributes {gpu.kernel, nvvm.kernel, kforge.read_only_inputs} {
    %p = llvm.getelementptr inbounds %in[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %x = llvm.load %p : !llvm.ptr -> f32
    %q = llvm.getelementptr %p[4] : (!llvm.ptr) -> !llvm.ptr, f32
    %g = llvm.addrspacecast %q : !llvm.ptr to !llvm.ptr<1>
    %v = llvm.load %g {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %o = llvm.load %out : !llvm.ptr -> f32
    llvm.store %x, %out : f32, !llvm.ptr
    %e = llvm.load %escaped : !llvm.ptr -> f32
    %n = llvm.ptrtoint %escaped : !llvm.ptr to i64
    %r = llvm.load %ordered : !llvm.ptr -> f32
    %w = llvm.load volatile %ordered : !llvm.ptr -> f32
    llvm.return
  }
  llvm.func @not_asked(%in: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %x = llvm.load %in : !llvm.ptr -> f32
    llvm.return
  }
}
