// A GPU kernel that reads far outside its input: an illegal address on the device.
func.func @kernel(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %far = arith.constant 100000000000 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c64, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%far, %tx] : memref<64x64xf32>
    memref.store %v, %out[%bx, %tx] : memref<64x64xf32>
    gpu.terminator
  }
  return
}
