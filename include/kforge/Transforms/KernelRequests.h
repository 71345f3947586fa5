//===- KernelRequests.h - names of the requests a gpu.launch carries to its kernel -*- C++ -*-===//
//
// transform.kforge.set_kernel_attributes records what a kernel asks of its compilation on the gpu.launch under
// these names; kforge-prepare-kernel-attributes / kforge-apply-kernel-attributes carry them across outlining,
// and the passes that act on them (kforge-streaming-stores, kforge-invariant-input-loads,
// kforge-l2-load-policy) read them on the kernel. One spelling for all of them.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_KERNELREQUESTS_H
#define KFORGE_TRANSFORMS_KERNELREQUESTS_H

#include "llvm/ADT/StringRef.h"

namespace kforge::requests {

/// Launch bounds (integers), put on the kernel as nvvm.minctasm / nvvm.maxnreg.
inline constexpr llvm::StringLiteral kMinBlocksPerSm = "kforge.min_blocks_per_sm";
inline constexpr llvm::StringLiteral kMaxRegisters = "kforge.max_registers";
/// Carried to the kernel as they are: two unit attributes and a string ("evict_first" / "evict_last").
inline constexpr llvm::StringLiteral kStreamingStores = "kforge.streaming_stores";
inline constexpr llvm::StringLiteral kReadOnlyInputs = "kforge.read_only_inputs";
inline constexpr llvm::StringLiteral kLoadL2Policy = "kforge.load_l2_policy";

} // namespace kforge::requests

#endif // KFORGE_TRANSFORMS_KERNELREQUESTS_H
