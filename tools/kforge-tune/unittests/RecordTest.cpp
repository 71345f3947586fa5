//===- RecordTest.cpp - database records read and write byte for byte ------===//

#include "Record.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace kforge::tune;
namespace json = llvm::json;

namespace {
/// The record `line` holds, written again.
std::string roundTrip(llvm::StringRef line, DatabaseRecord &record) {
  llvm::Expected<json::Value> value = json::parse(line);
  EXPECT_TRUE(bool(value)) << llvm::toString(value.takeError());
  json::Path::Root root;
  EXPECT_TRUE(fromJSON(*value, record, root));
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toJSON(record);
  return text;
}

// Lines as kforge-tune writes them (llvm::json sorts the keys).
const char *kBaseline =
    R"j({"compile_s":1.5,"description":"untransformed payload (loops)","format":"kforge-tune-record/1","id":0,)j"
    R"j("kind":"baseline","payload_hash":"abc","run":{"status":"correct","timing":{"median_ms":2.5}},)j"
    R"j("schedule":[],"status":"correct","target":"cpu","time_ms":2.5,"timestamp":"2024-01-31T12:00:00Z",)j"
    R"j("versions":{"kforge":"0.1.0","llvm":"22.1.0"}})j";
const char *kCorrectGpu =
    R"j({"chip":"sm_90","compile_s":0.25,"description":"tile 64x64","format":"kforge-tune-record/1","id":3,)j"
    R"j("island":"balanced","kind":"candidate","l2_flush":"dirty","parent":1,"payload_hash":"abc","policy":"evolve",)j"
    R"j("resources":[{"kernel":"k","registers":32}],"run_s":0.75,"run_timeout_s":37,)j"
    R"j("runner":{"pid":42,"request":3},"schedule":[{"kind":"tile","level":"block","sizes":[64,64]}],)j"
    R"j("schedule_hash":"h3","score":0.90000000000000002,"speedup_vs_baseline":4,)j"
    R"j("speedup_vs_previous_best":1.25,"status":"correct","step":"mutate tile","target":"gpu","time_ms":0.5,)j"
    R"j("timestamp":"2024-01-31T12:00:01Z","timing":{"median_ms":0.5},"verification_runs_ms":[10.5,1.25],)j"
    R"j("versions":{"kforge":"0.1.0","llvm":"22.1.0"}})j";
const char *kCompileFailedCpu =
    R"j({"action":null,"chip":null,"compile_s":0.125,"description":"transform script","diagnostics":[],)j"
    R"j("format":"kforge-tune-record/1","id":4,"island":"","kind":"candidate","l2_flush":null,"parent":null,)j"
    R"j("payload_hash":"abc","policy":"llm","reason":"kforge-compile failed (exit 1)","schedule":[],)j"
    R"j("schedule_hash":"h4","score":0,"script":"module {}","stage":"apply","status":"compile-failed","step":"",)j"
    R"j("target":"cpu","timestamp":"2024-01-31T12:00:02Z","versions":{"kforge":"0.1.0","llvm":"22.1.0"}})j";
} // namespace

TEST(DatabaseRecord, TheBaselineRoundTrips) {
  DatabaseRecord r;
  EXPECT_EQ(roundTrip(kBaseline, r), kBaseline);
  EXPECT_TRUE(r.isBaseline());
  EXPECT_EQ(r.timeMs, 2.5);
  EXPECT_FALSE(r.chip); // not a candidate's key
}

TEST(DatabaseRecord, AMeasuredCandidateRoundTrips) {
  DatabaseRecord r;
  EXPECT_EQ(roundTrip(kCorrectGpu, r), kCorrectGpu);
  EXPECT_TRUE(r.isCandidate() && r.isCorrect());
  EXPECT_EQ(r.id, 3);
  EXPECT_EQ(r.parent, 3 - 2);
  EXPECT_EQ(r.scheduleHash, "h3");
  EXPECT_EQ(r.runTimeoutSeconds, 37);
}

TEST(DatabaseRecord, ACompileFailureKeepsItsNulls) {
  DatabaseRecord r;
  EXPECT_EQ(roundTrip(kCompileFailedCpu, r), kCompileFailedCpu);
  EXPECT_FALSE(r.chip || r.l2Flush || r.parent || r.action);
  EXPECT_EQ(r.stage, "apply");
  EXPECT_EQ(r.script, "module {}");
}

TEST(DatabaseRecord, EveryKeyIsOptionalButTypesAreChecked) {
  DatabaseRecord r;
  json::Path::Root root;
  EXPECT_TRUE(fromJSON(json::Object{{"id", 2}}, r, root));
  EXPECT_EQ(r.id, 2);
  EXPECT_TRUE(r.kind.empty() && !r.timeMs);
  // A null time (a tool's "no time") reads as none.
  EXPECT_TRUE(fromJSON(json::Object{{"time_ms", nullptr}}, r, root));
  EXPECT_FALSE(r.timeMs);
  EXPECT_FALSE(fromJSON(json::Object{{"status", 5}}, r, root));
}

TEST(DatabaseRecord, TheBestIsTheFastestCorrectCandidate) {
  std::vector<DatabaseRecord> records(4);
  records[0].kind = "baseline";
  records[0].status = "correct";
  records[0].timeMs = 1;
  for (int i = 1; i < 4; ++i) {
    records[i].kind = "candidate";
    records[i].id = i;
    records[i].status = i == 2 ? "incorrect" : "correct";
    records[i].timeMs = 4 - i;
  }
  EXPECT_EQ(findBaseline(records), &records[0]);
  EXPECT_EQ(findBest(records), &records[3]);
  std::vector<TrialRecord> history = historyOf(records);
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[1].status, "incorrect");
}
