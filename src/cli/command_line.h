// The command-line conventions every `hammer` command shares, applied by ParseCommandLine:
//
// - Options that take values take ONE value per occurrence and may be repeated
//   (`-H 'A: b' -H 'C: d'`). CLI11 lets a list option swallow the words after it, so
//   `hammer load -H 'X: y' urls.txt` would read urls.txt as a header; here a positional may
//   come before or after any option.
// - An unknown option is named with the closest known one ("did you mean '--concurrency'?",
//   Levenshtein distance up to a third of the name) or, for a one-letter flag of curl, hey,
//   oha, wrk2 or k6, with the option of the same meaning ("curl's -X is '--method' here"), and
//   "try 'hammer CMD --help'".
// - --version prints the same text as `hammer --version` (version, commit, build type, features).
// - Two hidden first arguments, which the build uses so that the man pages and the shell
//   completions come from the same option table as --help and cannot drift from it:
//     hammer COMMAND --help-man               the command's man page, hammer-COMMAND(1), in roff
//     hammer COMMAND --help-completion SHELL  the command's part of the completion script (bash,
//                                             zsh or fish; `hammer --completion SHELL`
//                                             assembles the whole script)
//   Both are recognised only as the first argument and print on stdout.
//
// Threads: the caller's; CLI11 is not thread-safe.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hammer::cli {

// Makes every non-positional option of `app` take one value per occurrence (see above). Called
// by ParseCommandLine; exposed for tests that build an App themselves.
void OneValuePerOccurrence(CLI::App& app);

// The long option of `app` closest to `unknown` ("--concurency" -> "--concurrency"), or nullopt
// when none is close enough to be a likely typo. A one-letter flag ("-x") is never matched by
// spelling (every one is one edit from every other).
std::optional<std::string> ClosestOption(const CLI::App& app, const std::string& unknown);
// What a one-letter flag of curl, hey, oha, wrk2 or k6 is called in `app`, when `app` has an
// option of that meaning ("-z" -> "hey's and oha's -z is '-d' (--duration)"); else nullopt.
std::optional<std::string> PeerFlagMeaning(const CLI::App& app, const std::string& unknown);

inline constexpr const char* kHelpManFlag = "--help-man";
inline constexpr const char* kHelpCompletionFlag = "--help-completion";

// Adds --version to `app` (the command's complete option table) and parses argv into the
// options bound to it. Returns nullopt when the command should run, otherwise the exit status
// to return at once: 0 after --help, --version or an export was printed on stdout, kExitUsage
// after a usage error or an unknown shell (already explained on stderr as
// "hammer <command>: ...").
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, const char* command);

}  // namespace hammer::cli
