module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op) {
    %x = transform.structured.match ops{["linalg.matmul"]} in %m
  }
}
