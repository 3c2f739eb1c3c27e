// Shell completion scripts for bash, zsh and fish, rendered from the same tables as --help: the
// command list (cli/commands.h) and each command's CLI11 option table, so a new flag completes
// as soon as it exists. `hammer --completion SHELL` prints a whole script: Header, then each
// command's part (printed by `hammer COMMAND --help-completion SHELL`, see command_line.h), then
// Footer. The build installs the three scripts where each shell looks for them.
//
// What completes: command names (with their summaries where the shell shows descriptions);
// each command's options; file names for positional arguments and after an option whose value
// is a FILE (CLI11 type_name), nothing after an option that takes any other value.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cli/commands.h"

namespace hammer::cli {

enum class Shell { kBash, kZsh, kFish };

// "bash", "zsh" or "fish"; std::nullopt for anything else.
std::optional<Shell> ParseShell(std::string_view name);

// The start of the script (zsh needs its #compdef line first).
std::string CompletionHeader(Shell shell);

// One command's part: its options from `app`, the command's option table.
std::string CommandCompletion(Shell shell, const Command& command, const CLI::App& app);

// The end: the top-level completion (commands, --help, --version, --completion) and the
// registration with the shell. The parts of every command in Commands() must come before it.
std::string CompletionFooter(Shell shell);

}  // namespace hammer::cli
