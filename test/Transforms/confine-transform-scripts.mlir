// RUN: kforge-opt %s -split-input-file -verify-diagnostics -transform-interpreter | FileCheck %s
//
// kforge-opt confines transform scripts by default: kforge-confine-transform-scripts runs before the
// interpreter and refuses every op that can reach outside the payload, so none of it runs.

// An allowlisted script runs: canonicalize through apply_registered_pass, a kforge.* annotation.
// CHECK-LABEL: func.func @allowed
// CHECK: linalg.matmul {kforge.root}
module attributes {transform.with_named_sequence} {
  func.func @allowed(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %r : tensor<8x8xf32>
  }
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %m : (!transform.any_op) -> !transform.any_op
    transform.annotate %mm "kforge.root" : !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %m : (!transform.any_op) -> !transform.any_op
    %p = transform.apply_registered_pass "canonicalize" to %f : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A pass that writes a file.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.consumed}) {
    // expected-error @below {{pass 'snapshot-op-locations' is not allowed in a schedule}}
    %p = transform.apply_registered_pass "snapshot-op-locations" with options = { "filename" = "/tmp/kforge-snapshot.mlir" } to %m : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// kforge's own pass that dumps binaries to a directory.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.consumed}) {
    // expected-error @below {{pass 'kforge-dump-gpu-binaries' is not allowed in a schedule}}
    %p = transform.apply_registered_pass "kforge-dump-gpu-binaries" with options = { "dir" = "/tmp" } to %m : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// Arbitrary payload IR of the script's choosing.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %m : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{'transform.structured.replace' is not allowed in a schedule}}
    %r = transform.structured.replace %f {
      builtin.module {
        func.func @evil() {
          llvm.inline_asm has_side_effects "syscall", "" : () -> ()
          return
        }
      }
    } : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// PDL rewrites can build any op.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    // expected-error @below {{'transform.with_pdl_patterns' is not allowed in a schedule}}
    transform.with_pdl_patterns %m : !transform.any_op {
    ^bb0(%root: !transform.any_op):
      transform.sequence %root : !transform.any_op failures(propagate) {
      ^bb1(%arg: !transform.any_op):
      }
    }
    transform.yield
  }
}

// -----

// Attributes are instructions to later lowerings (linkage, sections): only kforge.* ones.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %m : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{a schedule may only annotate payload ops with kforge.* attributes, not 'llvm.linkage'}}
    transform.annotate %f "llvm.linkage" : !transform.any_op
    transform.yield
  }
}

// -----

// Upstream crashes on these; refused before the op runs (with --kforge-trusted too: see below).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %m : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{'transform.structured.tile_using_forall' has only zeros in static_tile_sizes: it would tile nothing}}
    %l, %t = transform.structured.tile_using_forall %mm tile_sizes [0, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%m: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %m : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{'transform.structured.tile_using_forall' has a negative value in static_num_threads}}
    %l, %t = transform.structured.tile_using_forall %mm num_threads [-4, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
