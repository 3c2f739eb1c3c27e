// WorkerIdentity: which of several workers this process is, when hammer runs as a Hadoop
// Streaming mapper, a Kubernetes Indexed Job pod, or under explicit flags. Used to split a total
// rate (--rate-total) evenly, to stagger the workers' schedules so their sum stays smooth, and to
// label status lines. Read from the environment once at start-up.
//
//   Hadoop Streaming   mapreduce_task_partition (index), mapreduce_job_maps (count),
//                      mapreduce_task_attempt_id / mapreduce_task_id (label)
//   Kubernetes         JOB_COMPLETION_INDEX (index); the count must be given (--workers)
//   Spark pipe()       nothing is set by Spark: pass HAMMER_WORKER_INDEX / HAMMER_WORKERS in the
//                      pipe's env (see integrations/spark)
//   any                HAMMER_WORKER_INDEX, HAMMER_WORKERS override the above
//
// Which task this is and which attempt of it, so that a reader of partials keeps one attempt
// of a task that was retried (stats/attempt_selector.h):
//   Hadoop Streaming   mapreduce_task_id (task), mapreduce_task_attempt_id (attempt)
//   Kubernetes         JOB_COMPLETION_INDEX (task), HOSTNAME, which is the pod's name (attempt)
//   any                HAMMER_TASK, HAMMER_ATTEMPT override the above
//
// Which input split this task reads, so that `--id-from-position` gives a document the same _id
// in every attempt of the task and different ones in different splits:
//   Hadoop Streaming   mapreduce_map_input_file and mapreduce_map_input_start (the split's file
//                      and first byte), as "FILE:START"; Hadoop 1's map_input_file/_start
//   Spark pipe()       nothing is set by Spark: pass HAMMER_INPUT_NAME per partition (see
//                      integrations/spark/bulk_index.py)
//   any                HAMMER_INPUT_NAME overrides the above
//
// Which run the workers share, to label what each pushes live (--remote-write):
//   Hadoop Streaming   mapreduce_job_id (the job)
//   Kubernetes, Spark  nothing is set: pass HAMMER_RUN_ID (on Kubernetes, e.g. from the pod's
//                      batch.kubernetes.io/job-name label through the downward API)
//   any                HAMMER_RUN_ID overrides the above
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace hammer {

struct WorkerIdentity {
  std::string source = "none";  // hadoop | kubernetes | env | none
  int index = -1;               // 0-based; -1 when unknown
  int count = 0;                // 0 when unknown
  std::string label;            // e.g. the Hadoop attempt id
  std::string task;             // "": not one of several tasks
  std::string attempt;          // "": unknown (attempts then differ by their start time only)
  std::string input_split;      // "": not known (then the input's own name stands for it)
  std::string run;              // "": not known

  bool in_hadoop() const { return source == "hadoop"; }
};

// `getenv` is injectable for tests.
WorkerIdentity DetectWorkerIdentity(
    const std::function<const char*(const char*)>& getenv_fn = nullptr);

}  // namespace hammer
