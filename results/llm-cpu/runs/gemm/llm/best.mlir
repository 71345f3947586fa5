// A kforge schedule, rendered by kforge-tune from the actions below (one fragment per action).
// Replay: kforge-opt PAYLOAD -transform-preload-library=transform-library-paths=THIS_FILE -transform-interpreter
//   actions: tile(block, 64x32); tile(reduction, 8)
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.consumed}) {
    %func = transform.structured.match ops{["func.func"]} attributes{sym_name = "gemm"} in %module : (!transform.any_op) -> !transform.any_op
    %return = transform.structured.match ops{["func.return"]} in %func : (!transform.any_op) -> !transform.any_op
    %root = transform.get_producer_of_operand %return[0] : (!transform.any_op) -> !transform.any_op
    // action 0: tile(block, 64x32)
    %block_root0, %block_loop1 = transform.structured.tile_using_forall %root tile_sizes [64, 32] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // action 1: tile(reduction, 8)
    %contraction2 = transform.structured.match ops{["linalg.matmul"]} in %block_loop1 : (!transform.any_op) -> !transform.any_op
    %k_tiled3, %k_loop4 = transform.structured.tile_using_for %contraction2 tile_sizes [0, 0, 8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // finish (cpu): bufferize, lower vectors
    %tfunc = transform.structured.match ops{["func.func"]} attributes{sym_name = "gemm"} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %tfunc {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %tfunc : !transform.any_op
    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32} : (!transform.any_op) -> !transform.any_op
    %bfunc = transform.structured.match ops{["func.func"]} attributes{sym_name = "gemm"} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %bfunc {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %bfunc : !transform.any_op
    transform.yield
  }
}
