// hammer: test production systems with real traffic at scale. Dispatches to one command.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "cli/commands.h"

namespace {

struct Command {
  std::string_view name;
  int (*run)(int, char**);
  std::string_view summary;
};

constexpr Command kCommands[] = {
    {"serve", hammer::cli::ServeMain,
     "embedded HTTP/1.1 target server for demos, tests, calibration"},
    {"load", hammer::cli::LoadMain, "send requests from a URL list and record every latency"},
    {"stats", hammer::cli::StatsMain, "aggregate records per key: reducer, combiner, reports"},
    {"dark", hammer::cli::DarkMain, "dark-canary proxy: serve from regular, fork copies to dark"},
    {"route", hammer::cli::RouteMain,
     "per-document shard assignment: a partitioner for Hadoop and Spark"},
    {"bulk", hammer::cli::BulkMain, "shard-aware bulk indexing into Elasticsearch/OpenSearch"},
    {"demo", hammer::cli::DemoMain, "serve + load + stats on loopback, with a report"},
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "hammer %s: test production systems with real traffic at scale\n\n"
               "usage: hammer <command> [options]   (hammer <command> --help for details)\n\n"
               "commands:\n",
               HAMMER_VERSION);
  for (const Command& c : kCommands) {
    std::fprintf(out, "  %-8.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? hammer::cli::kExitUsage : hammer::cli::kExitOk;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("hammer %s\n", HAMMER_VERSION);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (c.name == argv[1]) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "hammer: unknown command '%s' (try 'hammer --help')\n", argv[1]);
  return hammer::cli::kExitUsage;
}
