// RUN: kforge-opt %s
//
// Chains of elementwise ops over a 2-D tensor (bias, activations, scaling, ... with broadcasts), fused into
// one vectorized kernel: each block covers 1024 elements of a row, each of its 256 threads 4 contiguous
// elements (one 128-bit access per operand when the pipeline may assume alignment). The op whose result
// the function returns is the root; every linalg op feeding it is fused in. The row length must be a
// multiple of 1024.
module attributes {transform.with_named_sequence} {
  // A linalg op whose result feeds another linalg op, i.e. a producer that can be fused into its consumer.
  transform.named_sequence @match_fusable_producer(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.fill", "linalg.generic"] : !transform.any_op
    %user = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      %u = transform.match.structured.result %structured[0] any : (!transform.any_op) -> !transform.any_op
      transform.match.structured.yield %u : !transform.any_op
    }
    transform.match.operation_name %user ["linalg.generic"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @mark_producer(%op: !transform.any_op {transform.readonly}) {
    transform.annotate %op "kforge.producer" : !transform.any_op
    transform.yield
  }

  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    %marked = transform.foreach_match in %func
        @match_fusable_producer -> @mark_producer : (!transform.any_op) -> !transform.any_op
    %producers = transform.structured.match attributes{kforge.producer} in %module
      : (!transform.any_op) -> !transform.any_op
    %return = transform.structured.match ops{["func.return"]} in %module : (!transform.any_op) -> !transform.any_op
    %root = transform.get_producer_of_operand %return[0] : (!transform.any_op) -> !transform.any_op

    // 1024 elements of one row per block, then 4 contiguous elements per thread.
    %block_root, %block_loop = transform.structured.tile_using_forall %root tile_sizes [1, 1024]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_producers, %block_loop2 = transform.structured.fuse_into_containing_op %producers into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_root, %thread_loop = transform.structured.tile_using_forall %block_root tile_sizes [0, 4]
        (mapping = [#gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_producers, %thread_loop2 = transform.structured.fuse_into_containing_op %block_producers into %thread_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)

    // Every op of the thread tile works on 1x4 elements: vectorize them (and nothing outside the tiles).
    transform.apply_patterns to %thread_loop2 {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %thread_ops = transform.structured.match interface{LinalgOp} in %thread_loop2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %thread_ops : !transform.any_op
    %func1 = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func1 {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op

    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32}
        : (!transform.any_op) -> !transform.any_op
    %func2 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func2 {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %func2 : !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %func2 generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [256, 1, 1] : (!transform.any_op) -> !transform.any_op

    %func3 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func3 {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func3 : !transform.any_op
    transform.yield
  }
}
