// One entry point per `hammer` command, <Name>Main in cmd_<name>.cc: it declares the command's
// flags with CLI11, fills the library's flags or options struct, calls libhammer and maps the
// outcome to the process exit status (named apart from the library functions it calls).
#pragma once

#include <string>

namespace hammer::cli {

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;       // the run could not do its job (cluster, I/O, signal)
inline constexpr int kExitUsage = 2;         // bad flag or bad input: a one-line message on stderr
inline constexpr int kExitThreshold = 3;     // a --threshold failed (standalone mode only), or a
                                             // hammer dark --verdict-after verdict failed
inline constexpr int kExitInsufficient = 4;  // hammer dark --verdict-after: not enough to judge
// A run ended early by a signal exits 128 + its number, as a shell reports a process killed by
// it: 130 for SIGINT, 143 for SIGTERM (the summary of what was done is printed first).
inline constexpr int kExitSignalBase = 128;

// Prints "hammer <command>: <message>" on stderr and returns `status`.
int Complain(const char* command, const std::string& message, int status);

int ServeMain(int argc, char** argv);
int LoadMain(int argc, char** argv);
int StatsMain(int argc, char** argv);
int DemoMain(int argc, char** argv);
int DarkMain(int argc, char** argv);
int RouteMain(int argc, char** argv);
int BulkMain(int argc, char** argv);

}  // namespace hammer::cli
