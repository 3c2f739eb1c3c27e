// Manual pages in roff (man(7) macros), rendered from the same tables as --help: the top-level
// command list (cli/commands.h) and each command's CLI11 option table. The build writes them
// with `hammer --help-man` and `hammer COMMAND --help-man` (cmake/generate_docs.cmake) and
// installs them in man1, so a new flag is in the manual as soon as it is in --help.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/commands.h"

namespace hammer::cli {

// hammer(1): what hammer is, every command with its summary, the top-level options, the exit
// statuses shared by the commands, and a SEE ALSO entry for each hammer-COMMAND(1).
std::string HammerManPage();

// hammer-COMMAND(1): NAME from the command's summary; SYNOPSIS, DESCRIPTION, ARGUMENTS,
// OPTIONS (with defaults) and any footer text from `app`, the command's option table.
std::string CommandManPage(const Command& command, const CLI::App& app);

}  // namespace hammer::cli
