// One entry point per `hammer` command; each lives in cmd_<name>.cc, parses its flags with
// CLI11 and calls libhammer. Returns the process exit status.
#pragma once

#include <string>

namespace hammer::cli {

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // the run could not do its job (cluster, I/O, signal)
inline constexpr int kExitUsage = 2;      // bad flag or bad input: a one-line message on stderr
inline constexpr int kExitThreshold = 3;  // a --threshold failed (standalone mode only)

// Prints "hammer <command>: <message>" on stderr and returns `status`.
int Complain(const char* command, const std::string& message, int status);

int RunServe(int argc, char** argv);
int RunLoad(int argc, char** argv);
int RunStats(int argc, char** argv);
int RunDemo(int argc, char** argv);
int RunDark(int argc, char** argv);
int RunRoute(int argc, char** argv);
int RunBulk(int argc, char** argv);

}  // namespace hammer::cli
