#include "cli/command_line.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "cli/build_info.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/man_page.h"

namespace hammer::cli {

namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "--concurency=5" -> "--concurency"
std::string OptionWord(const std::string& arg) {
  return arg.substr(0, arg.find('='));
}

}  // namespace

void OneValuePerOccurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (!option->get_positional() && option->get_items_expected_max() > 1) {
      option->allow_extra_args(false);
    }
  }
}

std::optional<std::string> ClosestOption(const CLI::App& app, const std::string& unknown) {
  const std::string word = OptionWord(unknown);
  // Every one-letter flag is one edit away from every other ("-x" from "-h"): spelling says
  // nothing about them, so only long names are matched ("-concurrency" finds "--concurrency").
  if (word.size() <= 2) return std::nullopt;
  std::optional<std::string> best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& long_name : option->get_lnames()) {
      const std::string name = "--" + long_name;
      const size_t d = EditDistance(word, name);
      if (d < best_distance) {
        best_distance = d;
        best = name;
      }
    }
  }
  return best;
}

std::optional<std::string> PeerFlagMeaning(const CLI::App& app, const std::string& unknown) {
  // One-letter flags of the tools hammer's users come from, by meaning.
  struct PeerFlag {
    std::string_view flag;
    std::string_view option;  // hammer's long name
    std::string_view whose;
  };
  static constexpr PeerFlag kPeerFlags[] = {
      {"-X", "method", "curl's"},
      {"-z", "duration", "hey's and oha's"},
      {"-R", "rate", "wrk2's"},
      {"-k", "insecure", "curl's"},
      {"-D", "body", "hey's and oha's (a file: --body @FILE)"},
      {"-u", "concurrency", "k6's (virtual users)"},
      {"-i", "requests", "k6's (iterations)"},
      {"-v", "verbose", "curl's"},
      {"-s", "quiet", "curl's"},
  };
  const std::string word = OptionWord(unknown);
  for (const PeerFlag& peer : kPeerFlags) {
    if (word != peer.flag) continue;
    for (const CLI::Option* option : app.get_options()) {
      const std::vector<std::string>& longs = option->get_lnames();
      if (std::find(longs.begin(), longs.end(), peer.option) == longs.end()) continue;
      const std::string name = "--" + std::string(peer.option);
      const std::vector<std::string>& shorts = option->get_snames();
      const std::string ours =
          shorts.empty() ? "'" + name + "'" : "'-" + shorts.front() + "' (" + name + ")";
      return std::string(peer.whose) + " " + std::string(peer.flag) + " is " + ours;
    }
  }
  return std::nullopt;
}

namespace {

// Names each unknown option on its own line, with the likely intended one. False when there is
// none (the parse error is about something else).
bool ReportUnknownOptions(const CLI::App& app, const char* command) {
  bool any = false;
  for (const std::string& extra : app.remaining()) {
    if (extra.size() < 2 || extra[0] != '-') continue;
    std::string hint;
    if (std::optional<std::string> meaning = PeerFlagMeaning(app, extra)) {
      hint = " (" + *meaning + " here)";
    } else if (std::optional<std::string> closest = ClosestOption(app, extra)) {
      hint = " (did you mean '" + *closest + "'?)";
    }
    Complain(command, "unknown option '" + OptionWord(extra) + "'" + hint, kExitUsage);
    any = true;
  }
  return any;
}

}  // namespace

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, const char* command) {
  app.set_version_flag(
      "--version", [] { return VersionText(); },
      "print the version, source commit, build type and compiled-in features, then exit");
  OneValuePerOccurrence(app);
  const Command* entry = FindCommand(command);
  if (argc >= 2 && std::strcmp(argv[1], kHelpManFlag) == 0 && entry != nullptr) {
    std::fputs(CommandManPage(*entry, app).c_str(), stdout);
    return kExitOk;
  }
  if (argc >= 2 && std::strcmp(argv[1], kHelpCompletionFlag) == 0 && entry != nullptr) {
    std::optional<Shell> shell = argc >= 3 ? ParseShell(argv[2]) : std::nullopt;
    if (!shell) {
      return Complain(command, std::string(kHelpCompletionFlag) + ": expected bash, zsh or fish",
                      kExitUsage);
    }
    std::fputs(CommandCompletion(*shell, *entry, app).c_str(), stdout);
    return kExitOk;
  }
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);  // prints the version text on stdout; 0
  } catch (const CLI::ParseError& e) {
    // A typo first: "--upstrem" also makes "--upstream is required", which would mislead.
    if (!ReportUnknownOptions(app, command)) Complain(command, e.what(), kExitUsage);
  }
  std::fprintf(stderr, "try 'hammer %s --help'\n", command);
  return kExitUsage;
}

}  // namespace hammer::cli
