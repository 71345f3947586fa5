// Never returns: keeps storing into its output while an input element equals itself (always, for the
// finite random inputs). Written on buffers so the stores keep the loop alive.
func.func @kernel(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  scf.while : () -> () {
    %v = memref.load %x[%c0, %c0] : memref<64x64xf32>
    %same = arith.cmpf oeq, %v, %v : f32
    scf.condition(%same)
  } do {
    %v = memref.load %w[%c0, %c0] : memref<64x64xf32>
    memref.store %v, %out[%c0, %c0] : memref<64x64xf32>
    scf.yield
  }
  return
}
