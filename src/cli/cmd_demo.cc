#include <cstdio>

#include "cli/commands.h"

namespace hammer::cli {

int RunDemo(int, char**) {
  std::fprintf(stderr, "hammer demo: not built yet\n");
  return kExitUsage;
}

}  // namespace hammer::cli
