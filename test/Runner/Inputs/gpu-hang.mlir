// A GPU kernel that never finishes: spins while an input element equals itself, storing as it goes.
func.func @kernel(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.while : () -> () {
      %v = memref.load %x[%c0, %c0] : memref<64x64xf32>
      %same = arith.cmpf oeq, %v, %v : f32
      scf.condition(%same)
    } do {
      %v = memref.load %w[%c0, %c0] : memref<64x64xf32>
      memref.store %v, %out[%c0, %c0] : memref<64x64xf32>
      scf.yield
    }
    gpu.terminator
  }
  return
}
