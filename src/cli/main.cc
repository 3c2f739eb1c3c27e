// hammer: test production systems with real traffic at scale. Dispatches to one command.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "cli/build_info.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/man_page.h"

namespace {

using hammer::cli::Command;
using hammer::cli::Commands;

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "hammer %s: %.*s\n\n"
               "usage: hammer <command> [options]   (hammer <command> --help for details)\n"
               "       hammer --version | --completion bash|zsh|fish\n\n"
               "commands:\n",
               hammer::cli::kBuildInfo.version,
               static_cast<int>(hammer::cli::kHammerSummary.size()),
               hammer::cli::kHammerSummary.data());
  for (const Command& c : Commands()) {
    std::fprintf(out, "  %-8.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  }
}

// `hammer --completion SHELL`: the header, each command's part (printed by the command itself
// from its option table), the footer.
int PrintCompletion(const char* shell_name) {
  std::optional<hammer::cli::Shell> shell = hammer::cli::ParseShell(shell_name);
  if (!shell) {
    std::fprintf(stderr, "hammer: --completion: expected bash, zsh or fish, got '%s'\n",
                 shell_name);
    return hammer::cli::kExitUsage;
  }
  std::fputs(hammer::cli::CompletionHeader(*shell).c_str(), stdout);
  for (const Command& c : Commands()) {
    std::string name(c.name), flag(hammer::cli::kHelpCompletionFlag), shell_arg(shell_name);
    char* argv[] = {name.data(), flag.data(), shell_arg.data(), nullptr};
    if (int status = c.run(3, argv); status != hammer::cli::kExitOk) return status;
  }
  std::fputs(hammer::cli::CompletionFooter(*shell).c_str(), stdout);
  return hammer::cli::kExitOk;
}

// What went to standard output through stdio (--help, addresses, the demo's report) is checked
// once at the end, as coreutils' close_stdout does: output lost to a full disk (ENOSPC), a closed
// pipe (EPIPE) or a device error (EIO) is said, and a command that had succeeded exits 1.
int CheckStandardOutput(const char* command, int status) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && std::ferror(stdout) == 0) return status;
  std::fprintf(stderr, "hammer%s%s: cannot write to standard output%s%s\n", command ? " " : "",
               command ? command : "", flushed ? "" : ": ", flushed ? "" : std::strerror(errno));
  return status == hammer::cli::kExitOk ? hammer::cli::kExitFailure : status;
}

int Dispatch(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? hammer::cli::kExitUsage : hammer::cli::kExitOk;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("%s\n", hammer::cli::VersionText().c_str());
    return hammer::cli::kExitOk;
  }
  if (std::strcmp(argv[1], hammer::cli::kHelpManFlag) == 0) {
    std::fputs(hammer::cli::HammerManPage().c_str(), stdout);
    return hammer::cli::kExitOk;
  }
  if (std::strcmp(argv[1], "--completion") == 0) {
    if (argc != 3) {
      std::fprintf(stderr, "hammer: --completion: expected bash, zsh or fish\n");
      return hammer::cli::kExitUsage;
    }
    return PrintCompletion(argv[2]);
  }
  if (const Command* c = hammer::cli::FindCommand(argv[1])) return c->run(argc - 1, argv + 1);
  std::fprintf(stderr, "hammer: unknown command '%s' (try 'hammer --help')\n", argv[1]);
  return hammer::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe or socket is an error where it is written (EPIPE), never a signal that ends
  // the process: `hammer load | head -1` stops its run and prints what it sent, `hammer dark`
  // keeps serving when its stdout or stderr reader goes away, and a peer that resets a
  // connection fails that connection only.
  std::signal(SIGPIPE, SIG_IGN);
  const int status = Dispatch(argc, argv);
  return CheckStandardOutput(argc >= 2 && hammer::cli::FindCommand(argv[1]) ? argv[1] : nullptr,
                             status);
}
