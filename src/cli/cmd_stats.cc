#include <cstdio>

#include "cli/commands.h"

namespace hammer::cli {

int RunStats(int, char**) {
  std::fprintf(stderr, "hammer stats: not built yet\n");
  return kExitUsage;
}

}  // namespace hammer::cli
