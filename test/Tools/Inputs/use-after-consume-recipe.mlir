// A recipe that uses a handle after a transform consumed it (invalid: the payload it pointed to is gone).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.readonly}) {
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %module : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %matmul tile_sizes [64, 64]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %again, %loop2 = transform.structured.tile_using_forall %matmul tile_sizes [8, 8]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
