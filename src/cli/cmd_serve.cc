#include <cstdio>

#include "cli/commands.h"

namespace hammer::cli {

int RunServe(int, char**) {
  std::fprintf(stderr, "hammer serve: not built yet\n");
  return kExitUsage;
}

}  // namespace hammer::cli
