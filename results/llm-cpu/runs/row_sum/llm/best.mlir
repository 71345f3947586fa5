// A kforge schedule, rendered by kforge-tune from the actions below (one fragment per action).
// Replay: kforge-opt PAYLOAD -transform-preload-library=transform-library-paths=THIS_FILE -transform-interpreter
//   actions: tile(block, 64); vectorize
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %func = transform.structured.match ops{["func.func"]} attributes{sym_name = "row_sum"} in %module : (!transform.any_op) -> !transform.any_op
    %return = transform.structured.match ops{["func.return"]} in %func : (!transform.any_op) -> !transform.any_op
    %root = transform.get_producer_of_operand %return[0] : (!transform.any_op) -> !transform.any_op
    // action 0: tile(block, 64)
    %block_root0, %block_loop1 = transform.structured.tile_using_forall %root tile_sizes [64] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // action 1: vectorize
    %func2 = transform.structured.match ops{["func.func"]} attributes{sym_name = "row_sum"} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func2 {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
    } : !transform.any_op
    %tile_ops3 = transform.structured.match interface{LinalgOp} in %block_loop1 : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tile_ops3 : !transform.any_op
    %func4 = transform.structured.match ops{["func.func"]} attributes{sym_name = "row_sum"} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func4 {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func4 : !transform.any_op
    // finish (cpu): bufferize, lower vectors
    %tfunc = transform.structured.match ops{["func.func"]} attributes{sym_name = "row_sum"} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %tfunc {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %tfunc : !transform.any_op
    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32} : (!transform.any_op) -> !transform.any_op
    %bfunc = transform.structured.match ops{["func.func"]} attributes{sym_name = "row_sum"} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %bfunc {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %bfunc : !transform.any_op
    %vfunc = transform.structured.match ops{["func.func"]} attributes{sym_name = "row_sum"} in %bufferized : (!transform.any_op) -> !transform.any_op
    %hoisted = transform.structured.hoist_redundant_vector_transfers %vfunc : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %hoisted {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %hoisted : !transform.any_op
    transform.yield
  }
}
