#include "RunnerServer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace kforge::tune;

namespace {
/// A stand-in for `kforge-run --serve`: echoes each request line, and crashes, hangs or exits after
/// answering (as the real one does after a poisoned GPU context) on request.
class FakeServer : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/kforge-runner-server-XXXXXX";
    dir = mkdtemp(pattern);
    script = dir + "/server.sh";
    std::ofstream(script) << "#!/bin/sh\n"
                             "while read line; do\n"
                             "  case \"$line\" in\n"
                             "    *crash*) echo 'kforge runtime: cuLaunchKernel failed: CUDA_ERROR_X (boom)' >&2;"
                             " kill -SEGV $$ ;;\n"
                             "    *hang*) exec sleep 100 ;;\n"
                             "    *poison*) echo '{\"status\":\"failed\",\"runner_exit\":\"poisoned\"}'; sleep 0.2; exit 3 ;;\n"
                             "    *) echo \"{\\\"echo\\\":$line}\" ;;\n"
                             "  esac\n"
                             "done\n";
    chmod(script.c_str(), 0755);
  }
  void TearDown() override {
    std::remove(script.c_str());
    std::remove((dir + "/log").c_str());
    rmdir(dir.c_str());
  }
  std::string dir, script;
};
} // namespace

TEST_F(FakeServer, OneServerAnswersRequestsInOrder) {
  RunnerServer server(script, {}, dir + "/log");
  std::string why;
  EXPECT_EQ(server.request("1", 10, why).value_or(""), "{\"echo\":1}");
  EXPECT_EQ(server.request("2", 10, why).value_or(""), "{\"echo\":2}");
  EXPECT_EQ(server.starts(), 1);
}

TEST_F(FakeServer, ACrashIsAReasonAndTheNextRequestGetsAFreshServer) {
  RunnerServer server(script, {}, dir + "/log");
  std::string why;
  EXPECT_TRUE(server.request("1", 10, why));
  EXPECT_FALSE(server.request("\"crash\"", 10, why));
  EXPECT_NE(why.find("killed by signal"), std::string::npos) << why;
  EXPECT_NE(why.find("kforge runtime: cuLaunchKernel failed: CUDA_ERROR_X"), std::string::npos) << why;
  EXPECT_EQ(server.request("3", 10, why).value_or(""), "{\"echo\":3}");
  EXPECT_EQ(server.starts(), 2);
}

TEST_F(FakeServer, AHangTimesOutAndIsReplaced) {
  RunnerServer server(script, {}, dir + "/log");
  std::string why;
  EXPECT_FALSE(server.request("\"hang\"", 1, why));
  EXPECT_NE(why.find("timed out after 1 s"), std::string::npos) << why;
  EXPECT_EQ(server.request("4", 10, why).value_or(""), "{\"echo\":4}");
  EXPECT_EQ(server.starts(), 2);
}

TEST_F(FakeServer, AServerThatExitsAfterAnsweringIsRestarted) {
  RunnerServer server(script, {}, dir + "/log");
  std::string why;
  EXPECT_EQ(server.request("\"poison\"", 10, why).value_or(""), "{\"status\":\"failed\",\"runner_exit\":\"poisoned\"}");
  EXPECT_EQ(server.request("5", 10, why).value_or(""), "{\"echo\":5}");
  EXPECT_EQ(server.starts(), 2);
}

TEST(RunnerServer, AMissingProgramIsAReason) {
  RunnerServer server("/nonexistent/kforge-run", {"--serve"}, "/tmp/kforge-runner-server-missing.log");
  std::string why;
  EXPECT_FALSE(server.request("{}", 5, why));
  EXPECT_NE(why.find("cannot start /nonexistent/kforge-run"), std::string::npos) << why;
  std::remove("/tmp/kforge-runner-server-missing.log");
}
