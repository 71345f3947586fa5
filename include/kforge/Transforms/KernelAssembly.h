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

#include <cstdint>
#include <string>

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

/// wgmma.mma_async m64nNk8 .f32.tf32.tf32 with A from registers (matmul_to_mma_sync's swap_ab), which the NVVM
/// dialect's op (descriptors only) has no form for: $0 .. $(N/2 - 1) are the f32 accumulators, tied to the next
/// N/2 inputs, then A's four fragment registers, B's shared-memory descriptor (an i64) and the scale-d flag (an
/// i32; 0 would ignore the accumulators). Constraints: N/2 x "=f", "0" .. "N/2 - 1", "r,r,r,r,l,r". As CUTLASS's
/// SM90 RS TF32 atoms issue it.
inline std::string wgmmaTf32RegisterA(int64_t n) {
  int64_t d = n / 2;
  auto operand = [](int64_t i) { return "$" + std::to_string(i); };
  std::string s = "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, " + operand(2 * d + 5) +
                  ", 0;\n\twgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k8.f32.tf32.tf32 {";
  for (int64_t i = 0; i < d; ++i)
    s += (i ? ", " : "") + operand(i);
  s += "}, {" + operand(2 * d) + ", " + operand(2 * d + 1) + ", " + operand(2 * d + 2) + ", " + operand(2 * d + 3) +
       "}, " + operand(2 * d + 4) + ", p, 1, 1;\n\t}";
  return s;
}

/// wgmmaTf32RegisterA(n)'s constraints, in its operands' order.
inline std::string wgmmaTf32RegisterAConstraints(int64_t n) {
  int64_t d = n / 2;
  std::string constraints;
  for (int64_t i = 0; i < d; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < d; ++i)
    constraints += std::to_string(i) + ",";
  return constraints + "r,r,r,r,l,r";
}

/// Whether `assembly` is one of the strings above (or empty: a compiler-level memory barrier, no instruction).
inline bool isKforgeAssembly(llvm::StringRef assembly) {
  if (assembly.empty() || assembly == kPredicatedMbarrierArrive || assembly == kPredicatedPeerMbarrierArrive)
    return true;
  for (int64_t n = 8; n <= 256; n += 8)
    if (assembly == wgmmaTf32RegisterA(n))
      return true;
  return false;
}

} // namespace kforge

#endif // KFORGE_TRANSFORMS_KERNELASSEMBLY_H
