// One entry point per `hammer` command, <Name>Main in cmd_<name>.cc: it declares the command's
// flags with CLI11, parses them through ParseCommandLine (cli/command_line.h), fills the library's
// flags or options struct, calls libhammer and maps the outcome to the process exit status (named
// apart from the library functions it calls).
#pragma once

#include <span>
#include <string>
#include <string_view>

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

// What hammer is, in one line: the first line of `hammer --help` and the NAME of hammer(1).
inline constexpr std::string_view kHammerSummary =
    "test production systems with real traffic at scale";

// A command as the top level lists it: `hammer --help`, hammer(1), the shell completions.
struct Command {
  std::string_view name;
  int (*run)(int argc, char** argv);  // argv[0] is the command's name
  std::string_view summary;           // one line, lower case, no final period
};

// Every command, in the order `hammer --help` lists them.
std::span<const Command> Commands();

// The command called `name`, or nullptr.
const Command* FindCommand(std::string_view name);

}  // namespace hammer::cli
