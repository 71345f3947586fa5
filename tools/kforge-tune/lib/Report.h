//===- Report.h - a tuning run's report: markdown and an SVG plot -*- C++ -*-===//

#ifndef KFORGE_TUNE_REPORT_H
#define KFORGE_TUNE_REPORT_H

#include "Record.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace kforge::tune {

/// Text from outside (a model's reply, a child's diagnostics, an HTTP body) made safe to show or store: valid
/// UTF-8 (a malformed byte becomes U+FFFD), without control characters (C0 including ESC, DEL, C1) or
/// bidirectional overrides, tabs and newlines as spaces unless `keepNewlines`, and at most `maxBytes` long (cut
/// on a character boundary, "..." added).
std::string printableText(llvm::StringRef text, size_t maxBytes = std::string::npos, bool keepNewlines = false);
/// printableText, then escaped for markdown (a table cell, or running text): `\ | * _ [ ] ~ $` and the backtick
/// are backslash-escaped, `& < >` become entities, so the text reads as written and never becomes markup, a link or
/// HTML.
std::string markdownText(llvm::StringRef text);
/// printableText as a markdown code span (the fence longer than any run of backticks inside).
std::string markdownCode(llvm::StringRef text);
/// printableText, then escaped for XML character data and attribute values.
std::string xmlText(llvm::StringRef text);

/// Writes RUN/report.md (baseline, best, the best schedule, the top candidates, failures by stage) and
/// RUN/report.svg (best-so-far time against trials) from the database's records.
void writeReport(const std::string &runDir, llvm::ArrayRef<DatabaseRecord> records, const llvm::json::Object &run);

/// Empty, or what to tell the user when no correct candidate is faster than the baseline (the naive mapping the
/// search verifies against): then the tuned kernel in best/ is the slower one (an NCHW depthwise convolution whose
/// naive kernel ran 0.163 ms on an H100, its best candidate 0.183).
std::string slowerThanBaselineWarning(llvm::ArrayRef<DatabaseRecord> records);

/// The SVG plot alone, for tests: best-so-far time (ms, log scale) at each trial.
std::string bestSoFarSvg(const std::vector<std::pair<int, double>> &bestSoFar, double baselineMs,
                         const std::string &title);

} // namespace kforge::tune

#endif // KFORGE_TUNE_REPORT_H
