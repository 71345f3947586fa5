//===- Report.h - a tuning run's report: markdown and an SVG plot -*- C++ -*-===//

#ifndef KFORGE_TUNE_REPORT_H
#define KFORGE_TUNE_REPORT_H

#include "Record.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace kforge::tune {

/// Writes RUN/report.md (baseline, best, the best schedule, the top candidates, failures by stage) and
/// RUN/report.svg (best-so-far time against trials) from the database's records.
void writeReport(const std::string &runDir, llvm::ArrayRef<DatabaseRecord> records, const llvm::json::Object &run);

/// The SVG plot alone, for tests: best-so-far time (ms, log scale) at each trial.
std::string bestSoFarSvg(const std::vector<std::pair<int, double>> &bestSoFar, double baselineMs,
                         const std::string &title);

} // namespace kforge::tune

#endif // KFORGE_TUNE_REPORT_H
