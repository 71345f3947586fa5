//===- L2LoadPolicy.h - loads with an L2 cache policy, in LLVM IR -*- C++ -*-===//
//
// The LLVM-IR half of the load_l2_policy request (see kforge-l2-load-policy in Passes.td): kforge-l2-load-policy
// records the request on the kernel as the function attribute below; kforge-gpu-module-to-binary calls
// applyL2LoadPolicies on each device module once LLVM has optimised it, before code generation.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_L2LOADPOLICY_H
#define KFORGE_TRANSFORMS_L2LOADPOLICY_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace kforge {

/// The LLVM function attribute that asks for an L2 load policy: "evict_first" or "evict_last".
inline constexpr llvm::StringLiteral kL2LoadPolicyFunctionAttribute = "kforge-load-l2-policy";

/// The PTX that makes a 64-bit L2 cache policy register `$0` for `policy` ("evict_first" / "evict_last"),
/// covering every line accessed with it (fraction 1.0): the operand of the loads' and bulk copies' cache hints.
inline std::string createPolicyPtx(llvm::StringRef policy) {
  return "createpolicy.fractional.L2::" + policy.str() + ".b64 $0, 1.0;";
}

/// In each function of `module` carrying kL2LoadPolicyFunctionAttribute (which it removes): the loads first
/// combined into 128-bit vectors where LLVM's load-store vectoriser can (code generation would, but not through
/// inline PTX), then every load from a pointer argument written as inline PTX
/// `ld.global[.nc].L2::cache_hint[.v2|.v4].b16|b32` with a policy made once at the function's start by
/// `createpolicy.fractional.L2::<policy>.b64`. Returns the loads rewritten.
unsigned applyL2LoadPolicies(llvm::Module &module);

} // namespace kforge

#endif // KFORGE_TRANSFORMS_L2LOADPOLICY_H
