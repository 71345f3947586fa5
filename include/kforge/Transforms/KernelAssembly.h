//===- KernelAssembly.h - the inline assembly kforge's own rewrites emit -------*- C++ -*-===//
//
// A payload or a schedule may bring in no assembly (kforge-verify-payload refuses it); kforge's own transform
// ops emit a few fixed strings where the NVVM dialect has no form for an instruction, and the verifier allows
// exactly those. Each is harmless whoever writes it: it does what an NVVM op a schedule may emit does.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_KERNELASSEMBLY_H
#define KFORGE_TRANSFORMS_KERNELASSEMBLY_H

#include "llvm/ADT/StringRef.h"

namespace kforge {

/// mbarrier.arrive on the shared mbarrier at $1 (a 32-bit shared address) where $0 (an i32) is not 0: one
/// predicated instruction, as CUTLASS releases a pipeline stage from one thread of a warpgroup, where a branch
/// around nvvm.mbarrier.arrive would be a divergent path between wgmma, which ptxas serializes. Constraints
/// "r,r,~{memory}".
inline constexpr llvm::StringLiteral kPredicatedMbarrierArrive =
    "{\n\t.reg .pred p;\n\t.reg .b64 state;\n\tsetp.ne.b32 p, $0, 0;\n\t@p mbarrier.arrive.shared.b64 state, [$1];\n\t}";

/// The same arrival where $0 is not 0 on the mbarrier at $1's place in the shared memory of the cluster's block
/// of rank $2 (mapa.shared::cluster, then mbarrier.arrive on that shared::cluster address), as CUTLASS's
/// ClusterBarrier::arrive(cta_id, pred) releases a stage that a peer block's TMA multicast fills. Constraints
/// "r,r,r,~{memory}". What nvvm.mapa and nvvm.mbarrier.arrive on a shared_cluster pointer do.
inline constexpr llvm::StringLiteral kPredicatedPeerMbarrierArrive =
    "{\n\t.reg .pred p;\n\t.reg .b32 remote;\n\tsetp.ne.b32 p, $0, 0;\n\tmapa.shared::cluster.u32 remote, $1, "
    "$2;\n\t@p mbarrier.arrive.shared::cluster.b64 _, [remote];\n\t}";

/// Whether `assembly` is one of the strings above (or empty: a compiler-level memory barrier, no instruction).
inline bool isKforgeAssembly(llvm::StringRef assembly) {
  return assembly.empty() || assembly == kPredicatedMbarrierArrive || assembly == kPredicatedPeerMbarrierArrive;
}

} // namespace kforge

#endif // KFORGE_TRANSFORMS_KERNELASSEMBLY_H
