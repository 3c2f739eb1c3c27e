#include "cli/commands.h"

#include <cstdio>

namespace hammer::cli {

namespace {

constexpr Command kCommands[] = {
    {"serve", ServeMain, "embedded target server (HTTP/1.1 and HTTP/2, TLS) for demos, tests"},
    {"load", LoadMain, "send requests from a URL list and record every latency"},
    {"stats", StatsMain, "aggregate records per key: reducer, combiner, reports"},
    {"dark", DarkMain, "dark-canary proxy: serve from regular, fork copies to dark"},
    {"route", RouteMain, "per-document shard assignment: a partitioner for Hadoop and Spark"},
    {"bulk", BulkMain, "shard-aware bulk indexing into Elasticsearch/OpenSearch"},
    {"demo", DemoMain, "serve + load + stats on loopback, with a report"},
};

}  // namespace

int Complain(const char* command, const std::string& message, int status) {
  std::fprintf(stderr, "hammer %s: %s\n", command, message.c_str());
  return status;
}

std::span<const Command> Commands() {
  return kCommands;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace hammer::cli
