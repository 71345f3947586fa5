// The 10 x 12 grid of test/TransformOps/Inputs/block-grid.mlir in clusters of 2 x 1 blocks (as multicast launches
// them), renumbered with group_block_order {rows = 4}.
func.func @grid(%out: memref<12x10xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c10 = arith.constant 10 : index
  %c12 = arith.constant 12 : index
  %one = arith.constant 1 : i32
  gpu.launch clusters(%cx, %cy, %cz) in (%kx = %c2, %ky = %c1, %kz = %c1)
             blocks(%bx, %by, %bz) in (%gx = %c10, %gy = %c12, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %one, %out[%by, %bx] : memref<12x10xi32>
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    %grouped = transform.kforge.group_block_order %launch {rows = 4} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
