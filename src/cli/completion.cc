#include "cli/completion.h"

#include <vector>

namespace hammer::cli {

namespace {

// One option of a command's table, as the completion scripts need it.
struct OptionWords {
  std::vector<std::string> names;  // "-c", "--concurrency"
  std::string description;         // one line
  std::string type;                // "INT", "TEXT", "FILE"; "" for a flag
  bool repeatable = false;
  bool file = false;  // the value is a path: complete file names, else nothing
};

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  return text;
}

OptionWords Describe(const CLI::Option& option) {
  OptionWords words;
  for (const std::string& name : option.get_snames())
    words.names.push_back("-" + name);
  for (const std::string& name : option.get_lnames())
    words.names.push_back("--" + name);
  words.description = OneLine(option.get_description());
  if (option.get_items_expected_max() > 0) {
    std::string type = option.get_type_name();
    words.type = type.substr(0, type.find(':'));
    if (words.type.empty()) words.type = "VALUE";
    words.file = words.type == "FILE";
  }
  words.repeatable = option.get_expected_max() > 1;
  return words;
}

// The named options of `app` (positionals and hidden ones left out).
std::vector<OptionWords> NamedOptions(const CLI::App& app) {
  std::vector<OptionWords> out;
  for (const CLI::Option* o : app.get_options()) {
    if (!o->get_positional() && !o->get_group().empty()) out.push_back(Describe(*o));
  }
  return out;
}

bool HasPositionals(const CLI::App& app) {
  return !app.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

std::string Join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const std::string& w : words)
    out += (out.empty() ? "" : std::string(separator)) + w;
  return out;
}

// `text` inside single quotes for bash and zsh.
std::string ShellQuoted(std::string_view text) {
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `text` inside single quotes for fish (which escapes \ and ' within them).
std::string FishQuoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

// An _arguments description: [, ] and \ are special inside the brackets, : after them.
std::string ZshDescription(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == '\\' || c == ':') out += '\\';
    out += c;
  }
  return out;
}

std::string FunctionName(std::string_view command) {
  return "_hammer_" + std::string(command);
}

std::string BashCommand(const Command& command, const CLI::App& app) {
  std::vector<std::string> all, files, values;
  for (const OptionWords& o : NamedOptions(app)) {
    for (const std::string& name : o.names) {
      all.push_back(name);
      if (o.file) {
        files.push_back(name);
      } else if (!o.type.empty()) {
        values.push_back(name);
      }
    }
  }
  std::string out = FunctionName(command.name) + "() {\n  case $2 in\n";
  if (!files.empty()) out += "    " + Join(files, "|") + ") _hammer_files \"$1\"; return 0 ;;\n";
  if (!values.empty()) out += "    " + Join(values, "|") + ") return 0 ;;\n";
  out += "  esac\n  if [[ $1 == -* ]]; then\n    _hammer_words \"$1\" " +
         ShellQuoted(Join(all, " ")) + "\n";
  if (HasPositionals(app)) out += "  else\n    _hammer_files \"$1\"\n";
  return out + "  fi\n}\n";
}

std::string ZshCommand(const Command& command, const CLI::App& app) {
  std::string out = FunctionName(command.name) + "() {\n  _arguments -S";
  for (const OptionWords& o : NamedOptions(app)) {
    std::string spec;
    if (o.repeatable) {
      spec = "'*'";
    } else if (o.names.size() > 1) {
      spec = "'(" + Join(o.names, " ") + ")'";
    }
    spec += o.names.size() > 1 ? "{" + Join(o.names, ",") + "}" : o.names[0];
    std::string rest = "[" + ZshDescription(o.description) + "]";
    if (!o.type.empty()) rest += ":" + o.type + ":" + (o.file ? "_files" : " ");
    out += " \\\n    " + spec + ShellQuoted(rest);
  }
  for (const CLI::Option* p :
       app.get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    out += " \\\n    " + ShellQuoted((p->get_expected_max() > 1 ? "*:" : ":") +
                                     ZshDescription(p->get_name(true)) + ":_files");
  }
  return out + "\n}\n";
}

std::string FishCommand(const Command& command, const CLI::App& app) {
  const std::string prefix = "complete -c hammer -n " +
                             FishQuoted("__fish_seen_subcommand_from " + std::string(command.name));
  std::string out;
  for (const OptionWords& o : NamedOptions(app)) {
    out += prefix;
    for (const std::string& name : o.names) {
      out += (name.size() == 2 ? " -s " + name.substr(1) : " -l " + name.substr(2));
    }
    if (!o.type.empty()) out += o.file ? " -r -F" : " -x";
    out += " -d " + FishQuoted(o.description) + "\n";
  }
  if (HasPositionals(app)) out += prefix + " -F\n";
  return out;
}

}  // namespace

std::optional<Shell> ParseShell(std::string_view name) {
  if (name == "bash") return Shell::kBash;
  if (name == "zsh") return Shell::kZsh;
  if (name == "fish") return Shell::kFish;
  return std::nullopt;
}

std::string CompletionHeader(Shell shell) {
  std::string generated = "generated by `hammer --completion ";
  switch (shell) {
    case Shell::kBash:
      return "# bash completion for hammer, " + generated +
             "bash` from the tables behind --help.\n"
             "_hammer_words() { mapfile -t COMPREPLY < <(compgen -W \"$2\" -- \"$1\"); }\n"
             "_hammer_files() { mapfile -t COMPREPLY < <(compgen -f -- \"$1\"); }\n";
    case Shell::kZsh:
      return "#compdef hammer\n# zsh completion for hammer, " + generated +
             "zsh` from the tables behind --help.\n";
    case Shell::kFish:
      return "# fish completion for hammer, " + generated +
             "fish` from the tables behind --help.\ncomplete -c hammer -f\n";
  }
  return "";
}

std::string CommandCompletion(Shell shell, const Command& command, const CLI::App& app) {
  switch (shell) {
    case Shell::kBash:
      return BashCommand(command, app);
    case Shell::kZsh:
      return ZshCommand(command, app);
    case Shell::kFish:
      return FishCommand(command, app);
  }
  return "";
}

std::string CompletionFooter(Shell shell) {
  constexpr std::string_view kHelp = "list the commands";
  constexpr std::string_view kVersion = "print the version, commit, build type and features";
  constexpr std::string_view kCompletion = "print the completion script for a shell";
  std::string out;
  switch (shell) {
    case Shell::kBash: {
      std::vector<std::string> words;
      for (const Command& c : Commands())
        words.emplace_back(c.name);
      out =
          "_hammer() {\n  local cur=${COMP_WORDS[COMP_CWORD]}\n  COMPREPLY=()\n"
          "  if ((COMP_CWORD == 1)); then\n    _hammer_words \"$cur\" " +
          ShellQuoted(Join(words, " ") + " -h --help --version --completion") +
          "\n    return 0\n  fi\n  case ${COMP_WORDS[1]} in\n"
          "    --completion) ((COMP_CWORD == 2)) && _hammer_words \"$cur\" 'bash zsh fish' ;;\n";
      for (const Command& c : Commands()) {
        out += "    " + std::string(c.name) + ") " + FunctionName(c.name) +
               " \"$cur\" \"${COMP_WORDS[COMP_CWORD-1]}\" ;;\n";
      }
      return out + "  esac\n  return 0\n}\ncomplete -o filenames -F _hammer hammer\n";
    }
    case Shell::kZsh: {
      out = "_hammer() {\n  local curcontext=$curcontext state line\n  local -a commands=(\n";
      for (const Command& c : Commands()) {
        out += "    " + ShellQuoted(std::string(c.name) + ":" + std::string(c.summary)) + "\n";
      }
      out +=
          "  )\n  _arguments -C \\\n"
          "    '(- *)'{-h,--help}" +
          ShellQuoted("[" + ZshDescription(kHelp) + "]") + " \\\n    '(- *)'--version" +
          ShellQuoted("[" + ZshDescription(kVersion) + "]") + " \\\n    '(- *)'--completion" +
          ShellQuoted("[" + ZshDescription(kCompletion) + "]:shell:(bash zsh fish)") +
          " \\\n    '1: :->command' \\\n    '*:: :->argument'\n"
          "  case $state in\n"
          "    command) _describe -t commands 'hammer command' commands ;;\n"
          "    argument)\n      case $words[1] in\n";
      for (const Command& c : Commands()) {
        out += "        " + std::string(c.name) + ") " + FunctionName(c.name) + " ;;\n";
      }
      return out +
             "      esac ;;\n  esac\n}\n"
             "# Autoloaded from fpath: complete now. Sourced: register with compdef.\n"
             "if [[ $funcstack[1] == _hammer ]]; then _hammer \"$@\"; else compdef _hammer "
             "hammer; fi\n";
    }
    case Shell::kFish: {
      const std::string prefix = "complete -c hammer -n __fish_use_subcommand";
      for (const Command& c : Commands()) {
        out += prefix + " -a " + std::string(c.name) + " -d " + FishQuoted(c.summary) + "\n";
      }
      return out + prefix + " -s h -l help -d " + FishQuoted(kHelp) + "\n" + prefix +
             " -l version -d " + FishQuoted(kVersion) + "\n" + prefix +
             " -l completion -x -a 'bash zsh fish' -d " + FishQuoted(kCompletion) + "\n";
    }
  }
  return out;
}

}  // namespace hammer::cli
