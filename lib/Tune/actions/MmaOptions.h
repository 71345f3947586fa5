//===- MmaOptions.h - the options of the staged matmul_to_mma_sync op -----*- C++ -*-===//
//
// The actions that are an option of transform.kforge.matmul_to_mma_sync, which mma renders with the options
// the schedule's later actions add (TensorCores.cpp, TmaOptions.cpp). Private to lib/Tune/actions.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TUNE_ACTIONS_MMAOPTIONS_H
#define KFORGE_LIB_TUNE_ACTIONS_MMAOPTIONS_H

#include "../ActionDefinition.h"

namespace kforge::tune {

/// An option of the staged matmul_to_mma_sync op, in the op's attribute list: it renders nothing itself.
class MmaOptionAction : public ActionDefinition {
public:
  MmaOptionAction(ActionSpec spec, int phase) : ActionDefinition(std::move(spec), {{"", phase}}) {}
  RenderPoint renderPoint() const override { return RenderPoint::AfterFinish; }
  bool render(Renderer &, size_t, const Schedule &) const override { return false; }
};

/// tma, warp_specialize, persistent, overlap and multicast, in that (registration) order.
void addTmaOptionActions(ActionDefinitions &definitions);

} // namespace kforge::tune

#endif // KFORGE_LIB_TUNE_ACTIONS_MMAOPTIONS_H
