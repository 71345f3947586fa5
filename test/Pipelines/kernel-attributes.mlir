// RUN: rm -rf %t && kforge-opt %s --kforge-lower-to-nvvm="format=isa dump-dir=%t" | FileCheck %s --check-prefix=HOST
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/bounds_kernel_bounded_0.sm_90.ptx
// RUN: FileCheck %s --check-prefix=PLAIN --input-file=%t/bounds_kernel.sm_90.ptx

// Launch bounds recorded on a gpu.launch (by transform.kforge.set_kernel_attributes) reach the PTX of the
// kernel it becomes; a launch without them is outlined as usual.
// HOST-NOT: kforge.kernel_attributes
// HOST: gpu.launch_func @bounds_kernel::@bounds_kernel
// HOST: gpu.launch_func @bounds_kernel_bounded_0::@bounds_kernel_bounded_0
// PTX: .entry bounds_kernel_bounded_0
// PTX-DAG: .maxnreg 128
// PTX-DAG: .minnctapersm 2
// PLAIN: .entry bounds_kernel
// PLAIN-NOT: .minnctapersm
func.func @bounds(%a: memref<256xf32>, %b: memref<256xf32>) {
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
  } {kforge.min_blocks_per_sm = 2 : i64, kforge.max_registers = 128 : i64}
  return
}
