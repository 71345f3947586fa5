// RUN: kforge-opt %s
//
// A matmul together with its producer (the fill of the accumulator) and its elementwise consumers (bias,
// scale, activation, ...) fused into one GPU kernel: the matmul result never goes to global memory.
//   The op whose result the function returns is the root: it is tiled 64x64 per block and 4x4 per thread
//   (16x16 threads); every linalg op feeding it is fused into both loops; the K loop runs in steps of 4
//   with the 4x4 accumulator in registers; everything is vectorized.
module attributes {transform.with_named_sequence} {
  // A linalg op whose result feeds another linalg op, i.e. a producer that can be fused into its consumer.
  transform.named_sequence @match_fusable_producer(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.fill", "linalg.matmul", "linalg.generic"] : !transform.any_op
    %user = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {
    ^bb0(%structured: !transform.any_op):
      %u = transform.match.structured.result %structured[0] any : (!transform.any_op) -> !transform.any_op
      transform.match.structured.yield %u : !transform.any_op
    }
    transform.match.operation_name %user ["linalg.matmul", "linalg.generic"] : !transform.any_op
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

    // Block level: 64x64 outputs of the root; all producers follow into the loop.
    %block_root, %block_loop = transform.structured.tile_using_forall %root tile_sizes [64, 64]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_producers, %block_loop2 = transform.structured.fuse_into_containing_op %producers into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)

    // Thread level: 4x4 outputs per thread.
    %thread_root, %thread_loop = transform.structured.tile_using_forall %block_root tile_sizes [4, 4]
        (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %thread_producers, %thread_loop2 = transform.structured.fuse_into_containing_op %block_producers into %thread_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %canon_func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %canon_func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op

    // K loop in steps of 4; vectorize every op of the thread tile.
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %thread_loop2 : (!transform.any_op) -> !transform.any_op
    %k_mm, %k_loop = transform.structured.tile_using_for %matmul tile_sizes [0, 0, 4]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %k_mm vector_sizes [4, 4, 4] : !transform.any_op
    %elementwise = transform.structured.match ops{["linalg.fill", "linalg.generic"]} in %thread_loop2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %elementwise vector_sizes [4, 4] : !transform.any_op

    %func1 = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func1 {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func1 : !transform.any_op

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
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [16, 16, 1] : (!transform.any_op) -> !transform.any_op

    %func3 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func3 {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %hoisted = transform.structured.hoist_redundant_vector_transfers %func3 : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %hoisted {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %hoisted : !transform.any_op
    transform.yield
  }
}
