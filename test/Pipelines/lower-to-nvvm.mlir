// RUN: rm -rf %t && kforge-opt %s --kforge-lower-to-nvvm="format=isa dump-dir=%t" | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/vadd_kernel.sm_90.ptx
// RUN: kforge-opt %s --kforge-lower-to-nvvm="format=isa chip=sm_80 features=+ptx70 c-interface=false" \
// RUN:   | FileCheck %s --check-prefix=SM80

// A destination-passing payload already mapped to the GPU: C = A + B over 1024 elements.
// CHECK: llvm.func @vadd(
// CHECK: gpu.launch_func @vadd_kernel::@vadd_kernel blocks in
// CHECK: llvm.func @_mlir_ciface_vadd(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: gpu.binary @vadd_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// CHECK-SAME: assembly =
// CHECK-NOT: memref

// PTX: .target sm_90
// PTX: .visible .entry vadd_kernel(
// PTX: ld.global.b32
// PTX: add.rn.f32
// PTX: st.global.b32

// SM80: #nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">
// SM80-NOT: _mlir_ciface_vadd
func.func @vadd(%a: memref<1024xf32>, %b: memref<1024xf32>, %c: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %c256 : index
    %i = arith.addi %base, %tx : index
    %x = memref.load %a[%i] : memref<1024xf32>
    %y = memref.load %b[%i] : memref<1024xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<1024xf32>
    gpu.terminator
  }
  return
}
