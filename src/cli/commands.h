// One entry point per `hammer` command; each lives in cmd_<name>.cc, parses its flags with
// CLI11 and calls libhammer. Returns the process exit status.
#pragma once

namespace hammer::cli {

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;      // bad flag or bad input: a one-line message on stderr
inline constexpr int kExitThreshold = 3;  // a --threshold failed (standalone mode only)

int RunServe(int argc, char** argv);
int RunLoad(int argc, char** argv);
int RunStats(int argc, char** argv);
int RunDemo(int argc, char** argv);
int RunDark(int argc, char** argv);
int RunRoute(int argc, char** argv);
int RunBulk(int argc, char** argv);

}  // namespace hammer::cli
