//===- ReportTest.cpp - untrusted text in reports, child environments -----===//

#include "Files.h"
#include "Report.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace kforge::tune;

/// A timed record: the baseline (id 0) or a candidate.
static DatabaseRecord timedRecord(const std::string &kind, int id, const std::string &status, double ms) {
  DatabaseRecord r;
  r.kind = kind;
  r.id = id;
  r.status = status;
  r.timeMs = ms;
  return r;
}

TEST(Report, PrintableTextDropsControlsAndKeepsValidUTF8) {
  EXPECT_EQ(printableText("\x1b[31mred\x1b[0m"), "[31mred[0m"); // ESC gone: the terminal sees no sequence
  EXPECT_EQ(printableText("a\xc2\x9b" "31mb"), "a31mb");          // C1 CSI, the one-byte ESC [
  EXPECT_EQ(printableText("x\xe2\x80\xaey"), "xy");               // right-to-left override
  EXPECT_EQ(printableText("caf\xc3\xa9 \xff!"), "caf\xc3\xa9 \xef\xbf\xbd!");
  EXPECT_EQ(printableText("one\ntwo\tthree"), "one two three");
  EXPECT_EQ(printableText("one\ntwo", std::string::npos, /*keepNewlines=*/true), "one\ntwo");
  // Cut on a character boundary: never half of "é".
  EXPECT_EQ(printableText("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 6), "\xc3\xa9...");
  EXPECT_EQ(printableText("abcdef", 5), "ab...");
  EXPECT_EQ(printableText("abc", 3), "abc");
}

TEST(Report, MarkdownAndXmlEscapes) {
  EXPECT_EQ(markdownText("\x1b[31m<script>|x|`*_~$\\"), "\\[31m&lt;script&gt;\\|x\\|\\`\\*\\_\\~\\$\\\\");
  EXPECT_EQ(markdownText("[link](http://x)"), "\\[link\\](http://x)");
  EXPECT_EQ(markdownText("a\nb"), "a b");
  EXPECT_EQ(markdownCode("run/x"), "`run/x`");
  EXPECT_EQ(markdownCode("a`b"), "`` a`b ``");
  EXPECT_EQ(xmlText("<a href='x'>&\"\x1b"), "&lt;a href=&apos;x&apos;&gt;&amp;&quot;");
}

TEST(Report, UntrustedStringsAreEscapedInReportMdAndSvg) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kforge-report-test", dir));
  const std::string hostile = "\x1b[31m<script>alert(1)</script>|x|\n# heading";
  DatabaseRecord baseline = timedRecord("baseline", 0, "correct", 2.0);
  DatabaseRecord good = timedRecord("candidate", 1, "correct", 1.0);
  good.policy = "llm";
  good.step = "llm: " + hostile;
  good.description = hostile;
  DatabaseRecord bad = good;
  bad.id = 2;
  bad.status = "failed|<b>" + hostile;
  bad.timeMs.reset();
  llvm::json::Object run{{"payload", "<evil>.mlir"},
                         {"target", "cpu"},
                         {"policy", "llm"},
                         {"hardware", llvm::json::Object{{"name", hostile}}}};
  writeReport(std::string(dir), {baseline, good, bad}, run);
  std::string md = readText(joinPath(dir, "report.md")), svg = readText(joinPath(dir, "report.svg"));
  ASSERT_FALSE(md.empty());
  ASSERT_FALSE(svg.empty());
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  EXPECT_EQ(svg.find('\x1b'), std::string::npos);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_EQ(svg.find("<evil>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;evil&gt;.mlir"), std::string::npos) << svg;
  // In report.md a '<' is only ever code: the payload's code span and the best schedule's indented code block.
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(md).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (line.starts_with("    "))
      EXPECT_EQ(line.trim(), printableText(hostile)) << "the best schedule's code block";
    else if (line.starts_with("- payload: "))
      EXPECT_TRUE(line.starts_with("- payload: `<evil>.mlir` ")) << line.str();
    else
      EXPECT_FALSE(line.contains('<')) << line.str();
    EXPECT_FALSE(line.starts_with("# heading")) << "a line of the model's became markup";
    // Every table row keeps its column count: the model's '|' are escaped.
    if (line.starts_with("| 1 |"))
      EXPECT_EQ(line.count(" | "), 5u) << line.str();
  }
  EXPECT_NE(md.find("| llm: \\[31m&lt;script&gt;alert(1)&lt;/script&gt;\\|x\\| # heading |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| failed\\|&lt;b&gt;\\[31m"), std::string::npos) << md;
  llvm::sys::fs::remove_directories(dir);
}

TEST(Files, ChildrenNeverSeeKeyVariables) {
  setenv("OPENAI_API_KEY", "sk-openai-unit", 1);
  setenv("ANTHROPIC_API_KEY", "sk-anthropic-unit", 1);
  setenv("KFORGE_UNIT_CUSTOM_KEY", "sk-custom-unit", 1);
  setenv("KFORGE_UNIT_HARMLESS", "kept", 1);
  hideFromChildren("KFORGE_UNIT_CUSTOM_KEY");
  ChildEnvironment env;
  bool harmless = false;
  for (llvm::StringRef v : env.refs()) {
    EXPECT_FALSE(v.contains("sk-")) << v.str();
    harmless |= v == "KFORGE_UNIT_HARMLESS=kept";
  }
  EXPECT_TRUE(harmless);
  size_t n = env.refs().size();
  EXPECT_EQ(env.envp()[n], nullptr);

  // And through runProgram: the child's own view of its environment.
  llvm::SmallString<128> log;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("kforge-env", "txt", log));
  std::string message;
  ASSERT_EQ(runProgram("/usr/bin/env", {}, log, 30, message), 0) << message;
  std::string seen = readText(log);
  EXPECT_NE(seen.find("KFORGE_UNIT_HARMLESS=kept"), std::string::npos);
  EXPECT_EQ(seen.find("sk-"), std::string::npos) << seen;
  llvm::sys::fs::remove(log);
  unsetenv("KFORGE_UNIT_CUSTOM_KEY");
}

TEST(Report, WarnsWhenNoCandidateBeatsTheBaseline) {
  DatabaseRecord baseline = timedRecord("baseline", 0, "correct", 0.163);
  DatabaseRecord slow = timedRecord("candidate", 7, "correct", 0.183);
  DatabaseRecord failedFast = timedRecord("candidate", 8, "failed", 0.01); // a failed trial's time never counts
  std::vector<DatabaseRecord> records = {baseline, slow, failedFast};
  std::string warning = slowerThanBaselineWarning(records);
  EXPECT_NE(warning.find("no candidate beat the baseline"), std::string::npos) << warning;
  EXPECT_NE(warning.find("trial 7, took 0.1830 ms against the baseline's 0.1630 ms"), std::string::npos) << warning;

  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kforge-report-slow", dir));
  writeReport(std::string(dir), records, llvm::json::Object{{"target", "gpu"}});
  std::string md = readText(joinPath(std::string(dir), "report.md"));
  EXPECT_NE(md.find("- warning: no candidate beat the baseline"), std::string::npos) << md;

  // A faster candidate, or none correct: nothing to say.
  EXPECT_EQ(slowerThanBaselineWarning({baseline, slow, timedRecord("candidate", 9, "correct", 0.1)}), "");
  EXPECT_EQ(slowerThanBaselineWarning({baseline, failedFast}), "");
  llvm::sys::fs::remove_directories(dir);
}
