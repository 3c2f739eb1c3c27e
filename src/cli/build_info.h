// What this binary is: version, source commit, build type, compiler, optional features. The
// values come from the build (cmake/build_info.cmake writes build_info.cc into the build tree
// on every build and rewrites it only when a value changed, so a new commit recompiles one file
// and relinks the binary, never the library).
#pragma once

#include <string>

namespace hammer::cli {

struct BuildInfo {
  const char* version;     // the CMake project version, e.g. "0.1.0"
  const char* commit;      // "e9cda5e4b1c2", "e9cda5e4b1c2-dirty", or "unknown" (no git checkout)
  const char* build_type;  // CMAKE_BUILD_TYPE or the multi-config generator's configuration
  const char* compiler;    // e.g. "GNU 12.2.0"
  const char* features;    // optional features compiled in, space-separated: "tls zookeeper"
  const char* sanitizers;  // "" or e.g. "address undefined fuzzer-no-link"
};

extern const BuildInfo kBuildInfo;

// What `hammer --version` and `hammer COMMAND --version` print (no final newline):
//   hammer 0.1.0
//   commit:   e9cda5e4b1c2-dirty
//   build:    RelWithDebInfo, GNU 12.2.0
//   features: tls zookeeper
// The first line alone is stable for scripts: "hammer " followed by the version.
std::string VersionText();

}  // namespace hammer::cli
