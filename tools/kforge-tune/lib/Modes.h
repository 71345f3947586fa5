//===- Modes.h - kforge-tune's modes that run no search ---------*- C++ -*-===//
//
// Each prints its result on stdout and returns the process exit code. The search's modes (a run, --try,
// --replay) are in Tuner.h.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_MODES_H
#define KFORGE_TUNE_MODES_H

#include "Tuner.h"

#include "llvm/Support/JSON.h"

#include <string>

namespace kforge::tune {

/// --list-actions: the action registry as JSON ("kforge-actions/1").
llvm::json::Value actionRegistryJSON();
int printActionRegistry();

/// --actions-doc: docs/actions.md from the registry.
int printActionsDoc();

/// --validate FILE / --render FILE: checks a schedule (JSON) against the payload and prints the problems,
/// or "valid" and its description, or (`render`) the transform library. `target` is auto, gpu or cpu (auto:
/// gpu, needing no machine). `allowTf32`: --allow-tf32 (the tf32 action is valid only with it).
int checkScheduleFile(const Tools &tools, const std::string &payloadPath, const std::string &entry,
                      const std::string &target, const std::string &file, bool render, bool allowTf32);

/// --dry-run N: the first `count` schedules the built-in policy `policy` would propose (JSON lines), without
/// compiling or measuring anything. `target` is auto, gpu or cpu; `chip` is --chip (empty: the GPU's).
int printDryRun(const Tools &tools, const std::string &payloadPath, const std::string &entry, const std::string &target,
                std::string chip, const std::string &policy, uint64_t seed, int count, bool allowTf32);

} // namespace kforge::tune

#endif // KFORGE_TUNE_MODES_H
