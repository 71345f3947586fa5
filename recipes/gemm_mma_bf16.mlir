// RUN: kforge-opt %s
//
// A bf16 (or f16) matmul with f32 accumulation, its fill and its elementwise consumers (bias, activation,
// rounding to bf16) on tensor cores, in one GPU kernel:
//   the op whose result the function returns is the root; it is tiled 128x128 per block and 32x64 per warp
//   (4 x 2 warps, 256 threads); every linalg op feeding it is fused into both loops; after bufferization each
//   warp's matmul becomes mma.sync m16n8k16 instructions over a K loop in steps of 16, its 64 f32
//   accumulators per lane in registers, and the epilogue is applied to them in registers
//   (transform.kforge.matmul_to_mma_sync). A and B are read from global memory (no shared-memory staging).
// Fits: M a multiple of 128, N of 128, K of 16. The schedule the search measured fastest among its unstaged
// tensor-core schedules on the H200 (docs/perf/tensorcores-h200.md); kforge-tune's `mma` action renders the
// same steps.
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

    // Block level: 128x128 outputs of the root; all producers follow into the loop.
    %block_root, %block_loop = transform.structured.tile_using_forall %root tile_sizes [128, 128]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block_producers, %block_loop2 = transform.structured.fuse_into_containing_op %producers into %block_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)

    // Warp level: 32x64 outputs per warp.
    %warp_root, %warp_loop = transform.structured.tile_using_forall %block_root tile_sizes [32, 64]
        (mapping = [#gpu.warp<y>, #gpu.warp<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %warp_producers, %warp_loop2 = transform.structured.fuse_into_containing_op %block_producers into %warp_loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %canon_func = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %canon_func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %canon_func : !transform.any_op

    %bufferized = transform.bufferization.one_shot_bufferize %module
        {bufferize_function_boundaries = true, function_boundary_type_conversion = 1 : i32}
        : (!transform.any_op) -> !transform.any_op
    %func2 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func2 {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %func2 : !transform.any_op
    // 2 x 4 warps: 64 threads along x (two warps), 4 along y.
    %launch = transform.gpu.map_forall_to_blocks %func2 generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [64, 4, 1] : (!transform.any_op) -> !transform.any_op

    // Each warp's matmul tile to mma.sync, its fill and epilogue into the accumulators' registers.
    %func3 = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func3 {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %matmuls = transform.structured.match ops{["linalg.matmul"]} in %func3 : (!transform.any_op) -> !transform.any_op
    transform.kforge.matmul_to_mma_sync %matmuls : (!transform.any_op) -> ()
    transform.apply_cse to %func3 : !transform.any_op
    transform.yield
  }
}
