// A 10 x 12 grid of blocks (one thread each) storing at [block y, block x]: test/TransformOps/group-block-order.test
// renumbers it with group_block_order {rows = ROWS} (sed writes ROWS).
func.func @grid(%out: memref<12x10xi32>) {
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c12 = arith.constant 12 : index
  %one = arith.constant 1 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c10, %gy = %c12, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %one, %out[%by, %bx] : memref<12x10xi32>
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    %grouped = transform.kforge.group_block_order %launch {rows = ROWS} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
