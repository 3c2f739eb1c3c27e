// hammer demo: the main job on the embedded default, all on loopback. Starts `hammer serve`
// in-process on an ephemeral port, loads a weighted URL list (with an error route and an
// error-like body) for about ten seconds, and prints the per-URL table.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "hammer/base/duration.h"
#include "hammer/base/output_file.h"
#include "hammer/base/progress.h"
#include "hammer/base/signals.h"
#include "hammer/load/body_matcher.h"
#include "hammer/load/load_report.h"
#include "hammer/load/load_run.h"
#include "hammer/serve/serve_group.h"

namespace hammer::cli {

int DemoMain(int argc, char** argv) {
  CLI::App app{
      "Run the main job on the embedded default, on loopback: start `hammer serve` on an\n"
      "ephemeral 127.0.0.1 port, send a weighted URL list to it at a steady rate, and print\n"
      "the per-URL report. Nothing leaves this machine.\n\n"
      "Example: hammer demo --duration 10s --rate 2000",
      "hammer demo"};
  std::string duration_text = "10s";
  double rate = 2000;
  int concurrency = 200;
  int threads = 1;
  std::string records_path;
  std::string summary_json;
  app.add_option("-d,--duration", duration_text, "how long to send")->capture_default_str();
  app.add_option("-r,--rate", rate, "requests per second")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("-c,--concurrency", concurrency, "in-flight cap")->capture_default_str();
  app.add_option("-t,--threads", threads, "load threads")->capture_default_str();
  app.add_option("--records", records_path, "also write the per-request records to this file")
      ->type_name("FILE");
  app.add_option("--summary-json", summary_json, "also write the summary as JSON here")
      ->type_name("FILE");
  std::string html = "hammer-demo-report.html";
  app.add_option("--html", html, "where to write the HTML report ('' for none)")
      ->capture_default_str()
      ->type_name("FILE");
  if (std::optional<int> exit = ParseCommandLine(app, argc, argv, "demo")) return *exit;
  Result<Nanos> duration = ParseDuration(duration_text);
  if (!duration.ok() || *duration <= 0 || *duration > 600 * kSecond) {
    std::fprintf(stderr, "hammer demo: --duration must be between 0 and 10m\n");
    return kExitUsage;
  }

  BlockShutdownSignals();
  serve::ServeOptions serve_options;
  serve_options.listen = "127.0.0.1:0";
  serve_options.threads = 1;
  auto server = serve::TargetServerGroup::Start(serve_options);
  if (!server.ok()) {
    std::fprintf(stderr, "hammer demo: %s\n", server.status().message().c_str());
    return kExitUsage;
  }
  const std::string base = (*server)->address().ToString();

  load::LoadOptions options;
  options.concurrency = concurrency;
  options.threads = threads;
  options.rate = rate;
  options.duration = *duration;
  options.source.loop = true;
  options.source.shuffle = true;
  options.source.seed = 1;
  options.error_pattern = *load::CompileErrorPattern(load::kSeedErrorPattern);
  options.emit = records_path.empty() ? load::EmitMode::kNone : load::EmitMode::kRecords;
  int records_fd = -1;
  if (!records_path.empty()) {
    records_fd = open(records_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (records_fd < 0) {
      std::fprintf(stderr, "hammer demo: cannot write '%s'\n", records_path.c_str());
      return kExitUsage;
    }
  }
  std::fprintf(stderr,
               "hammer demo: target %s (hammer serve), %.0f req/s for %s over a weighted list "
               "of 9 routes\n",
               base.c_str(), rate, FormatDuration(*duration).c_str());
  ProgressOptions progress;
  progress.live_line = isatty(STDERR_FILENO) != 0;
  load::LoadInput input;
  input.lines = load::TargetSource::FromText(serve::DemoUrlList(base), options.source);
  auto summary = load::RunLoad(options, std::move(input), records_fd, progress);
  if (records_fd >= 0) close(records_fd);
  (*server)->Stop();
  if (!summary.ok()) {
    std::fprintf(stderr, "hammer demo: %s\n", summary.status().message().c_str());
    return kExitUsage;
  }
  if (!summary->records_error.ok()) {
    return Complain("demo", "--records: " + summary->records_error.message(), kExitFailure);
  }
  std::fputs(load::FormatLoadSummary(*summary, /*with_table=*/true, 50).c_str(), stdout);
  std::printf("\nthe server counted %llu requests received\n",
              static_cast<unsigned long long>((*server)->counts().requests()));
  if (!summary_json.empty()) {
    Status written =
        WriteOutputFile("--summary-json", summary_json, load::LoadSummaryJson(*summary, "demo"));
    if (!written.ok()) return Complain("demo", written.message(), kExitFailure);
  }
  if (!html.empty()) {
    Status written =
        WriteOutputFile("--html", html,
                        load::LoadSummaryHtml(*summary, "hammer demo",
                                              {{"target", "hammer serve on " + base},
                                               {"input", "weighted list of 9 routes, shuffled"}}));
    if (!written.ok()) return Complain("demo", written.message(), kExitFailure);
    char resolved[PATH_MAX];
    if (html != kStdoutPath) {
      std::printf("HTML report: %s\n", realpath(html.c_str(), resolved) ? resolved : html.c_str());
    }
  }
  return kExitOk;
}

}  // namespace hammer::cli
