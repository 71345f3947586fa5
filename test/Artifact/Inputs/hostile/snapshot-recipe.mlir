// A schedule that would write a file (snapshot.mlir in the working directory) if it ran.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.consumed}) {
    %p = transform.apply_registered_pass "snapshot-op-locations" with options = { "filename" = "snapshot.mlir" } to %m : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
