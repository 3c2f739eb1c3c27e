#include "hammer/base/worker_identity.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace hammer {
namespace {

WorkerIdentity Detect(const std::map<std::string, std::string>& env) {
  return DetectWorkerIdentity([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(WorkerIdentityTest, NothingSetMeansUnknown) {
  WorkerIdentity id = Detect({});
  EXPECT_EQ(id.source, "none");
  EXPECT_EQ(id.index, -1);
  EXPECT_EQ(id.count, 0);
  EXPECT_FALSE(id.in_hadoop());
}

TEST(WorkerIdentityTest, HadoopTaskGivesIndexCountAndAttempt) {
  WorkerIdentity id = Detect({{"mapreduce_task_partition", "3"},
                              {"mapreduce_job_maps", "8"},
                              {"mapreduce_task_attempt_id", "attempt_1_0001_m_000003_0"}});
  EXPECT_TRUE(id.in_hadoop());
  EXPECT_EQ(id.index, 3);
  EXPECT_EQ(id.count, 8);
  EXPECT_EQ(id.label, "attempt_1_0001_m_000003_0");
}

TEST(WorkerIdentityTest, OldHadoopNamesStillMeanHadoop) {
  WorkerIdentity id = Detect({{"mapred_task_id", "task_1_m_000001"}});
  EXPECT_TRUE(id.in_hadoop());
  EXPECT_EQ(id.label, "task_1_m_000001");
}

TEST(WorkerIdentityTest, KubernetesIndexedJobAndExplicitOverrides) {
  WorkerIdentity k8s = Detect({{"JOB_COMPLETION_INDEX", "5"}});
  EXPECT_EQ(k8s.source, "kubernetes");
  EXPECT_EQ(k8s.index, 5);
  EXPECT_EQ(k8s.count, 0);
  WorkerIdentity both = Detect({{"JOB_COMPLETION_INDEX", "5"}, {"HAMMER_WORKERS", "10"}});
  EXPECT_EQ(both.index, 5);
  EXPECT_EQ(both.count, 10);
  WorkerIdentity env = Detect({{"HAMMER_WORKER_INDEX", "2"}, {"HAMMER_WORKERS", "4"}});
  EXPECT_EQ(env.source, "env");
  EXPECT_EQ(env.index, 2);
  EXPECT_EQ(env.count, 4);
}

TEST(WorkerIdentityTest, GarbageValuesAreIgnored) {
  WorkerIdentity id = Detect({{"mapreduce_task_partition", "x1"}, {"HAMMER_WORKERS", "-3"}});
  EXPECT_EQ(id.source, "none");
  EXPECT_EQ(id.count, 0);
}

// Partials name the task and the attempt, so that a reader keeps one attempt of a retried task.
TEST(WorkerIdentityTest, HadoopNamesTheTaskAndTheAttempt) {
  WorkerIdentity id = Detect({{"mapreduce_task_partition", "0"},
                              {"mapreduce_task_id", "task_1_0001_m_000000"},
                              {"mapreduce_task_attempt_id", "attempt_1_0001_m_000000_1"}});
  EXPECT_EQ(id.task, "task_1_0001_m_000000");
  EXPECT_EQ(id.attempt, "attempt_1_0001_m_000000_1");
}

// A Kubernetes Indexed Job: the completion index is the task, the pod's name (HOSTNAME) the
// attempt; a pod retried under backoffLimit keeps the index and gets a new name.
TEST(WorkerIdentityTest, KubernetesTaskIsTheIndexAndTheAttemptThePod) {
  WorkerIdentity id = Detect({{"JOB_COMPLETION_INDEX", "4"}, {"HOSTNAME", "load-4-x7k2p"}});
  EXPECT_EQ(id.task, "4");
  EXPECT_EQ(id.attempt, "load-4-x7k2p");
}

TEST(WorkerIdentityTest, ExplicitTaskAndAttemptOverride) {
  WorkerIdentity id = Detect({{"JOB_COMPLETION_INDEX", "4"},
                              {"HOSTNAME", "load-4-x7k2p"},
                              {"HAMMER_TASK", "shard-a"},
                              {"HAMMER_ATTEMPT", "rerun-2"}});
  EXPECT_EQ(id.task, "shard-a");
  EXPECT_EQ(id.attempt, "rerun-2");
  EXPECT_EQ(Detect({}).task, "");
}

TEST(WorkerIdentityTest, HadoopSplitIsTheFileAndItsFirstByte) {
  WorkerIdentity id = Detect({{"mapreduce_task_id", "task_1_0001_m_000002"},
                              {"mapreduce_map_input_file", "hdfs://nn/user/me/docs.jsonl"},
                              {"mapreduce_map_input_start", "134217728"}});
  EXPECT_EQ(id.input_split, "hdfs://nn/user/me/docs.jsonl:134217728");
  EXPECT_EQ(Detect({{"map_input_file", "file:/d.jsonl"}, {"map_input_start", "7"}}).input_split,
            "file:/d.jsonl:7");
  EXPECT_EQ(Detect({}).input_split, "");
}

TEST(WorkerIdentityTest, ExplicitInputNameOverridesTheSplit) {
  WorkerIdentity id = Detect({{"mapreduce_map_input_file", "hdfs://nn/docs.jsonl"},
                              {"mapreduce_map_input_start", "0"},
                              {"HAMMER_INPUT_NAME", "docs.jsonl#3"}});
  EXPECT_EQ(id.input_split, "docs.jsonl#3");
}

TEST(WorkerIdentityTest, RunIsTheHadoopJobUnlessGiven) {
  EXPECT_EQ(
      Detect({{"mapreduce_task_partition", "2"}, {"mapreduce_job_id", "job_local42_0001"}}).run,
      "job_local42_0001");
  EXPECT_EQ(Detect({{"mapreduce_job_id", "job_local42_0001"}, {"HAMMER_RUN_ID", "nightly-7"}}).run,
            "nightly-7");
  EXPECT_EQ(Detect({{"JOB_COMPLETION_INDEX", "1"}}).run, "");
}

}  // namespace
}  // namespace hammer
