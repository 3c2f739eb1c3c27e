// The command-line conventions every `hammer` command shares, applied by ParseCommandLine:
//
// - Options that take values take ONE value per occurrence and may be repeated
//   (`-H 'A: b' -H 'C: d'`). CLI11 lets a list option swallow the words after it, so
//   `hammer load -H 'X: y' urls.txt` would read urls.txt as a header; here a positional may
//   come before or after any option.
// - An unknown option is named with the closest known one ("did you mean '--concurrency'?",
//   Levenshtein distance up to a third of the name), and "try 'hammer CMD --help'".
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

// The option of `app` closest to `unknown` ("--concurency" -> "--concurrency"), or nullopt when
// none is close enough to be a likely typo.
std::optional<std::string> ClosestOption(const CLI::App& app, const std::string& unknown);

// Parses argv into the options bound to `app`. Returns nullopt when the command should run,
// otherwise the exit status to return at once: 0 after --help, kExitUsage after a usage error
// (already explained on stderr as "hammer <command>: ...").
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, const char* command);

}  // namespace hammer::cli
