#include "hammer/base/worker_identity.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace hammer {

namespace {

std::optional<int> IntFrom(const char* text) {
  if (text == nullptr) return std::nullopt;
  std::string_view s(text);
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

WorkerIdentity DetectWorkerIdentity(const std::function<const char*(const char*)>& getenv_fn) {
  auto env = [&](const char* name) -> const char* {
    return getenv_fn ? getenv_fn(name) : std::getenv(name);
  };
  WorkerIdentity id;
  if (auto partition = IntFrom(env("mapreduce_task_partition"))) {
    id.source = "hadoop";
    id.index = *partition;
    id.count = IntFrom(env("mapreduce_job_maps")).value_or(0);
    const char* attempt = env("mapreduce_task_attempt_id");
    if (attempt == nullptr) attempt = env("mapreduce_task_id");
    if (attempt != nullptr) id.label = attempt;
  } else if (env("mapreduce_task_id") != nullptr || env("mapred_task_id") != nullptr) {
    id.source = "hadoop";
    const char* task = env("mapreduce_task_id");
    id.label = task != nullptr ? task : env("mapred_task_id");
  } else if (auto index = IntFrom(env("JOB_COMPLETION_INDEX"))) {
    id.source = "kubernetes";
    id.index = *index;
    id.label = "pod " + std::to_string(*index);
    id.task = std::to_string(*index);
    if (const char* pod = env("HOSTNAME")) id.attempt = pod;
  }
  if (id.in_hadoop()) {
    if (const char* task = env("mapreduce_task_id")) id.task = task;
    if (const char* attempt = env("mapreduce_task_attempt_id")) id.attempt = attempt;
  }
  const char* split_file = env("mapreduce_map_input_file");
  const char* split_start = env("mapreduce_map_input_start");
  if (split_file == nullptr) {
    split_file = env("map_input_file");
    split_start = env("map_input_start");
  }
  if (split_file != nullptr) {
    id.input_split = std::string(split_file) + ":" + (split_start != nullptr ? split_start : "0");
  }
  if (const char* split = env("HAMMER_INPUT_NAME")) id.input_split = split;
  if (const char* job = env("mapreduce_job_id")) id.run = job;
  if (const char* run = env("HAMMER_RUN_ID")) id.run = run;
  if (const char* task = env("HAMMER_TASK")) id.task = task;
  if (const char* attempt = env("HAMMER_ATTEMPT")) id.attempt = attempt;
  if (auto index = IntFrom(env("HAMMER_WORKER_INDEX"))) {
    if (id.source == "none") id.source = "env";
    id.index = *index;
  }
  if (auto count = IntFrom(env("HAMMER_WORKERS"))) {
    if (id.source == "none") id.source = "env";
    id.count = *count;
  }
  if (id.label.empty() && id.index >= 0) id.label = "worker " + std::to_string(id.index);
  return id;
}

}  // namespace hammer
