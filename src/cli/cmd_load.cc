#include <cstdio>

#include "cli/commands.h"

namespace hammer::cli {

int RunLoad(int, char**) {
  std::fprintf(stderr, "hammer load: not built yet\n");
  return kExitUsage;
}

}  // namespace hammer::cli
