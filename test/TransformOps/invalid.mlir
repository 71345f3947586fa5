// RUN: kforge-opt %s -split-input-file -verify-diagnostics
// Options that contradict each other or are out of range fail when the script is verified, before it runs
// (and also when the handle is empty).

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{k_steps must be at least 1, not 0}}
    transform.kforge.matmul_to_mma_sync %mm {k_steps = 0} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{block_k must be 0 (not staged) or positive}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = -16} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected warp_grid = [rows, columns] of warps}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{expected thread_grid = [rows, columns] of threads}}
    transform.kforge.matmul_to_simt_staged %mm {block_k = 8, thread_grid = array<i64: 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{block_k (6) must be a positive multiple of 4}}
    transform.kforge.matmul_to_simt_staged %mm {block_k = 6, thread_grid = array<i64: 8, 8>} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %rows = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{moments over a row of 3 warps: the warps must be a power of 2 (their partials merge pairwise)}}
    %lanes = transform.kforge.distribute_rows_to_lanes %rows {lanes = 96, moments} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Negative values are out of range too (I64Attr's getters are unsigned: the verifiers compare signed values).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{ahead must be a positive number of rows, not -1}}
    %same = transform.kforge.prefetch_rows_to_l2 %launch {ahead = -1} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{blocks must be positive, not -2}}
    %same = transform.kforge.pipeline_rows %launch {blocks = -2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{min_blocks_per_sm must be positive}}
    %same = transform.kforge.set_kernel_attributes %launch {min_blocks_per_sm = -2} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %launch = transform.structured.match ops{["gpu.launch"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{quarters must be 1, 2 or 3 (of each vector's elements), not -1}}
    %same = transform.kforge.stash_rows_in_shared %launch {quarters = -1} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{swap_ab reads B's TF32 fragments from its TMA-filled stage into registers: it needs tf32 and tma}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 1, 8>, async_stages = 3, wgmma, tf32, swap_ab} : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @+1 {{producer_warpgroup makes warp_specialized's producer a warpgroup that gives its registers to the consumers: it needs warp_specialized}}
    transform.kforge.matmul_to_mma_sync %mm {block_k = 32, warp_grid = array<i64: 1, 8>, async_stages = 3, wgmma, tma, tf32, producer_warpgroup} : (!transform.any_op) -> ()
    transform.yield
  }
}
