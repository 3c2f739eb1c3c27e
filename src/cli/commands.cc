#include "cli/commands.h"

#include <cstdio>

namespace hammer::cli {

int Complain(const char* command, const std::string& message, int status) {
  std::fprintf(stderr, "hammer %s: %s\n", command, message.c_str());
  return status;
}

}  // namespace hammer::cli
