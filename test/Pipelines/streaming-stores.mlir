// REQUIRES: ptxas
// RUN: rm -rf %t && kforge-opt %s --kforge-lower-to-nvvm="format=bin dump-dir=%t" | FileCheck %s --check-prefix=HOST
// RUN: grep -a -c -e "-dscm cs" %t/copy_kernel_bounded_0.sm_90.cubin | FileCheck %s --check-prefix=ASKED
// RUN: not grep -a -e "-dscm" %t/copy_kernel.sm_90.cubin
// RUN: kforge-opt %s --kforge-lower-to-nvvm="format=isa" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ISA

// A launch that asked for streaming stores (transform.kforge.set_kernel_attributes {streaming_stores}) becomes a
// kernel whose module ptxas assembles with -dscm=cs (recorded in the cubin's notes); the other launch's kernel is
// assembled as before. As PTX for the driver's JIT, the request cannot be kept, and the pipeline says so.
// HOST: gpu.binary @copy_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// HOST: gpu.binary @copy_kernel_bounded_0 [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80", flags = {"ptxas-cmd-options" = ["-dscm=cs"]}>
// ASKED: 1
// ISA: warning: streaming stores take effect when ptxas assembles the kernel (format=bin or fatbin)
// ISA-NOT: see current operation
// ISA-NOT: warning
func.func @copy(%a: memref<256xf32>, %b: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<256xf32>
    memref.store %v, %b[%tx] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%tx] : memref<256xf32>
    memref.store %v, %a[%tx] : memref<256xf32>
    gpu.terminator
  } {kforge.streaming_stores}
  return
}
