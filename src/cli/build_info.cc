#include "cli/build_info.h"

namespace hammer::cli {

std::string VersionText() {
  const BuildInfo& b = kBuildInfo;
  std::string text = std::string("hammer ") + b.version + "\ncommit:   " + b.commit +
                     "\nbuild:    " + b.build_type + ", " + b.compiler;
  if (*b.sanitizers != '\0') text += std::string(", sanitizers: ") + b.sanitizers;
  text += std::string("\nfeatures: ") + (*b.features != '\0' ? b.features : "(none)");
  return text;
}

}  // namespace hammer::cli
