//===- ScheduleConfinement.h - what an untrusted schedule may do --*- C++ -*-===//
//
// A schedule (a transform-dialect script) may come from a language model or from a
// run directory someone else wrote. Confinement is an allowlist: the transform ops
// whose effects stay inside the payload (tiling, fusion, mapping, bufferization,
// kforge's own ops, the dialect's control flow), the registered passes that neither
// read nor write files, and guards for upstream ops that crash on values their
// verifiers accept. Anything else (`transform.structured.replace`, PDL, an
// `apply_registered_pass` of a pass that dumps files, a non-transform op inside a
// script) is refused with an error at the op, before any of it runs.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_SCHEDULECONFINEMENT_H
#define KFORGE_TRANSFORMS_SCHEDULECONFINEMENT_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace kforge {

/// How much of a script to check: everything, or (for a trusted, hand-written
/// recipe) only the guards against upstream crashes.
enum class ScheduleTrust { Untrusted, Trusted };

/// Checks every transform script nested in `root` (the outermost transform ops and
/// everything inside them) against the allowlist (untrusted) and the crash guards
/// (always); emits one error per offending op. Succeeds when there is no script.
mlir::LogicalResult checkScheduleConfined(mlir::Operation *root,
                                          ScheduleTrust trust = ScheduleTrust::Untrusted);

/// True when `root` holds at least one transform op.
bool containsTransformScript(mlir::Operation *root);

/// The hint every refusal ends with.
inline constexpr const char *kTrustedHint =
    "(a hand-written recipe that needs it can be run with --kforge-trusted)";

} // namespace kforge

#endif // KFORGE_TRANSFORMS_SCHEDULECONFINEMENT_H
