//===- Report.cpp - a tuning run's report: markdown and an SVG plot -------===//

#include "Report.h"

#include "Files.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace kforge::tune;
namespace json = llvm::json;


/// Characters that are never shown: controls (a terminal acts on ESC and on C1's CSI) and the bidirectional
/// formatting characters that make text display in an order other than the one it is read in.
static bool isHidden(llvm::UTF32 c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
         (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

std::string kforge::tune::printableText(llvm::StringRef text, size_t maxBytes, bool keepNewlines) {
  std::string out;
  const auto *p = reinterpret_cast<const llvm::UTF8 *>(text.data()), *end = p + text.size();
  while (p < end && out.size() <= maxBytes) {
    const llvm::UTF8 *start = p;
    llvm::UTF32 c = 0;
    if (llvm::convertUTF8Sequence(&p, end, &c, llvm::strictConversion) != llvm::conversionOK) {
      p = start + 1;
      out += "\xEF\xBF\xBD"; // U+FFFD
    } else if (c == '\n' && keepNewlines) {
      out += '\n';
    } else if (c == '\n' || c == '\t' || c == '\r') {
      out += ' ';
    } else if (!isHidden(c)) {
      out.append(reinterpret_cast<const char *>(start), p - start);
    }
  }
  if (out.size() <= maxBytes)
    return out;
  // Cut on a character boundary (not before a continuation byte, 10xxxxxx) so that "..." fits too.
  size_t cut = maxBytes >= 3 ? maxBytes - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80)
    --cut;
  out.resize(cut);
  return out + std::string("...", std::min<size_t>(3, maxBytes));
}

std::string kforge::tune::markdownText(llvm::StringRef text) {
  std::string out;
  for (char c : printableText(text)) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '\\': case '|': case '`': case '*': case '_': case '[': case ']': case '~': case '$':
      out += '\\';
      out += c;
      break;
    default: out += c;
    }
  }
  return out;
}

std::string kforge::tune::markdownCode(llvm::StringRef text) {
  std::string plain = printableText(text);
  size_t longest = 0, run = 0;
  for (char c : plain) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  // A span that starts or ends with a backtick needs a space between it and the fence.
  std::string pad = longest > 0 ? " " : "";
  return fence + pad + plain + pad + fence;
}

std::string kforge::tune::xmlText(llvm::StringRef text) {
  std::string out;
  for (char c : printableText(text)) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string kforge::tune::bestSoFarSvg(const std::vector<std::pair<int, double>> &bestSoFar, double baselineMs,
                                       const std::string &title) {
  const double width = 640, height = 360, left = 70, right = 20, top = 40, bottom = 50;
  std::string svg;
  llvm::raw_string_ostream os(svg);
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n",
                      width, height);
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << llvm::formatv("<text x=\"{0}\" y=\"22\" font-size=\"14\">{1}</text>\n", left, xmlText(title));
  if (bestSoFar.empty()) {
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">no correct kernel yet</text>\n</svg>\n", left, height / 2);
    return svg;
  }
  double lo = bestSoFar.back().second, hi = std::max(bestSoFar.front().second, baselineMs);
  for (auto &[t, ms] : bestSoFar)
    lo = std::min(lo, ms);
  lo /= 1.2;
  hi *= 1.2;
  int lastTrial = std::max(1, bestSoFar.back().first);
  auto x = [&](double trial) { return left + (width - left - right) * trial / lastTrial; };
  auto y = [&](double ms) {
    return top + (height - top - bottom) * (std::log(hi) - std::log(ms)) / (std::log(hi) - std::log(lo));
  };
  // Axes, with the log-scale time ticks at powers of ten and their halves.
  os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", left, top,
                      height - bottom);
  os << llvm::formatv("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"black\"/>\n", left, width - right,
                      height - bottom);
  for (double decade = std::pow(10, std::floor(std::log10(lo))); decade <= hi; decade *= 10)
    for (double tick : {decade, 2 * decade, 5 * decade}) {
      if (tick < lo || tick > hi)
        continue;
      os << llvm::formatv("<line x1=\"{0}\" y1=\"{1:F1}\" x2=\"{2}\" y2=\"{1:F1}\" stroke=\"#ddd\"/>\n", left, y(tick),
                          width - right);
      os << llvm::formatv("<text x=\"{0}\" y=\"{1:F1}\" text-anchor=\"end\">{2}</text>\n", left - 6, y(tick) + 4,
                          tick);
    }
  for (int i = 0; i <= 4; ++i) {
    int trial = lastTrial * i / 4;
    os << llvm::formatv("<text x=\"{0:F1}\" y=\"{1}\" text-anchor=\"middle\">{2}</text>\n", x(trial),
                        height - bottom + 18, trial);
  }
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">trial</text>\n", (left + width - right) / 2,
                      height - 10);
  os << llvm::formatv("<text x=\"16\" y=\"{0}\" transform=\"rotate(-90 16 {0})\" text-anchor=\"middle\">best time "
                      "so far (ms, log scale)</text>\n",
                      (top + height - bottom) / 2);
  if (baselineMs > 0) {
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1:F1}\" x2=\"{2}\" y2=\"{1:F1}\" stroke=\"#c33\" "
                        "stroke-dasharray=\"4 3\"/>\n",
                        left, y(baselineMs), width - right);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1:F1}\" text-anchor=\"end\" fill=\"#c33\">baseline</text>\n",
                        width - right, y(baselineMs) - 4);
  }
  // Best-so-far is a step function.
  os << "<polyline fill=\"none\" stroke=\"#1f6fb4\" stroke-width=\"2\" points=\"";
  double previous = -1;
  for (auto &[trial, ms] : bestSoFar) {
    if (previous > 0)
      os << llvm::formatv("{0:F1},{1:F1} ", x(trial), y(previous));
    os << llvm::formatv("{0:F1},{1:F1} ", x(trial), y(ms));
    previous = ms;
  }
  os << "\"/>\n</svg>\n";
  return svg;
}

std::string kforge::tune::slowerThanBaselineWarning(llvm::ArrayRef<DatabaseRecord> records) {
  const DatabaseRecord *baseline = findBaseline(records), *best = findBest(records);
  if (!baseline || !best || !baseline->timeMs || !best->timeMs || *best->timeMs <= *baseline->timeMs)
    return std::string();
  return llvm::formatv("no candidate beat the baseline: the best, trial {0}, took {1:F4} ms against the baseline's "
                       "{2:F4} ms ({3:F2}x); best/ holds the slower kernel (kforge-compile --naive builds the "
                       "baseline's)",
                       best->id, *best->timeMs, *baseline->timeMs, *baseline->timeMs / *best->timeMs)
      .str();
}

void kforge::tune::writeReport(const std::string &runDir, llvm::ArrayRef<DatabaseRecord> records,
                               const json::Object &run) {
  double baselineMs = 0;
  std::vector<const DatabaseRecord *> candidates, correct;
  std::map<std::string, int> failures;
  for (const DatabaseRecord &r : records) {
    if (r.isBaseline()) {
      baselineMs = r.timeMs.value_or(0);
      continue;
    }
    candidates.push_back(&r);
    if (r.isCorrect() && r.timeMs)
      correct.push_back(&r);
    else
      ++failures[r.status + (r.stage ? " at " + *r.stage : "")];
  }
  std::vector<std::pair<int, double>> bestSoFar;
  double best = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const DatabaseRecord *r = candidates[i];
    if (r->isCorrect())
      if (std::optional<double> t = r->timeMs; t && (best == 0 || *t < best))
        best = *t;
    if (best > 0)
      bestSoFar.push_back({static_cast<int>(i + 1), best});
  }
  std::stable_sort(correct.begin(), correct.end(), [](const DatabaseRecord *a, const DatabaseRecord *b) {
    return a->timeMs.value_or(0) < b->timeMs.value_or(0);
  });

  std::string payload = run.getString("payload").value_or("").str();
  std::string target = run.getString("target").value_or("").str();
  std::string title = "kforge-tune: " + llvm::sys::path::filename(payload).str() + " on " + target;
  std::string md;
  llvm::raw_string_ostream os(md);
  // Everything printed below that kforge-tune did not choose itself (the run's strings, a model's `why`, a
  // runner's status) goes through markdownText / markdownCode / xmlText: it is shown, never interpreted.
  os << "# " << markdownText(title) << "\n\n";
  os << "- payload: " << markdownCode(payload) << " (structural hash "
     << markdownText(run.getString("payload_hash").value_or("").substr(0, 16)) << ")\n";
  os << "- target: " << markdownText(target);
  if (const json::Object *hw = run.getObject("hardware"))
    if (auto name = hw->getString("name"); name && !name->empty())
      os << " (" << markdownText(*name) << ")";
  os << "\n- policy: " << markdownText(run.getString("policy").value_or("")) << ", seed "
     << run.getInteger("seed").value_or(0) << "\n";
  os << llvm::formatv("- trials: {0} ({1} correct, {2} failed)\n", candidates.size(), correct.size(),
                      candidates.size() - correct.size());
  os << llvm::formatv("- baseline (untransformed{0}): {1:F4} ms\n", target == "gpu" ? ", naive GPU mapping" : "",
                      baselineMs);
  // The reference's check and the search's speed are kept in RUN/run.json as the run goes (the description
  // the caller passes is the invocation's, without them).
  std::optional<json::Value> saved = readJSON(joinPath(runDir, "run.json"));
  const json::Object *savedRun = saved ? saved->getAsObject() : nullptr;
  auto fromRun = [&](llvm::StringRef key) -> const json::Object * {
    if (const json::Object *o = run.getObject(key))
      return o;
    return savedRun ? savedRun->getObject(key) : nullptr;
  };
  if (const json::Object *check = fromRun("reference_check")) {
    std::string status = check->getString("status").value_or("").str();
    if (status == "skipped")
      os << "- reference " << markdownText(check->getString("reason").value_or("")) << "\n";
    else
      os << "- reference check: " << markdownText(status) << " with "
         << markdownText(check->getString("against").value_or(""))
         << llvm::formatv(" (relative L2 error {0:e})\n", check->getNumber("rel_l2_error").value_or(0));
  }
  if (const json::Object *speed = fromRun("search_speed")) {
    std::optional<double> first = speed->getNumber("time_to_first_correct_trial_s");
    os << "- time to the first correct trial: "
       << (first ? llvm::formatv("{0:F1} s", *first).str() : std::string("none yet"))
       << llvm::formatv("; {0:F1} trials per minute (the last invocation: {1} trials in {2:F1} s of search, after "
                        "{3:F1} s of set-up)\n",
                        speed->getNumber("trials_per_minute").value_or(0), speed->getInteger("trials").value_or(0),
                        speed->getNumber("search_s").value_or(0), speed->getNumber("setup_s").value_or(0));
  }
  if (!correct.empty()) {
    const DatabaseRecord *top = correct.front();
    double t = *top->timeMs;
    os << llvm::formatv("- best: trial {0}, {1:F4} ms, {2:F2}x the baseline\n", top->id, t,
                        baselineMs > 0 ? baselineMs / t : 0.0);
    if (std::string slower = slowerThanBaselineWarning(records); !slower.empty())
      os << "- warning: " << slower << "\n";
    os << "\nBest schedule (`best.mlir` replays it; `best/` holds the kernel):\n\n    " << printableText(top->description)
       << "\n";
  }
  os << "\n![best time so far](report.svg)\n\n## Fastest candidates\n\n";
  os << "| trial | time (ms) | speed-up | policy | step | schedule |\n|---:|---:|---:|---|---|---|\n";
  for (size_t i = 0; i < correct.size() && i < 10; ++i) {
    const DatabaseRecord *r = correct[i];
    double t = *r->timeMs;
    os << llvm::formatv("| {0} | {1:F4} | {2:F2}x | {3} {4} | {5} | {6} |\n", r->id, t,
                        baselineMs > 0 ? baselineMs / t : 0.0, markdownText(r->policy), markdownText(r->island),
                        markdownText(r->step), markdownText(r->description));
  }
  if (!failures.empty()) {
    os << "\n## Failures\n\n| status | count |\n|---|---:|\n";
    for (auto &[what, count] : failures)
      os << "| " << markdownText(what) << " | " << count << " |\n";
  }
  if (const json::Object *score = run.getObject("score"))
    os << llvm::formatv("\nScore of a trial: {0:F2} if it compiles, + {1:F2} if it is correct, + {2:F2} x ln(previous "
                        "best time / its time); every record is in db.jsonl.\n",
                        score->getNumber("compiles").value_or(0), score->getNumber("correct").value_or(0),
                        score->getNumber("speedup").value_or(0));

  // Whole or not at all (writeText checks every write: a full disk is a message, not an abort).
  auto write = [&](const std::string &file, const std::string &text) {
    if (!writeText(joinPath(runDir, file), text))
      llvm::errs() << "kforge-tune: warning: the report (" << file << ") was not updated\n";
  };
  write("report.md", md);
  write("report.svg", bestSoFarSvg(bestSoFar, baselineMs, title));
}
