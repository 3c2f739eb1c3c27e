#include "hammer/load/dry_run.h"

#include "hammer/http/client.h"
#include "hammer/load/load_worker.h"
#include "hammer/load/redact.h"
#include "hammer/load/request_feed.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"

namespace hammer::load {

Status PrintDryRun(const LoadOptions& options, LoadInput input, std::FILE* out) {
  net::EventLoop loop;
  net::Resolver resolver(0);
  http::HttpClient client(&loop, &resolver, http::ClientOptions{});
  SharedRunState shared;
  shared.requests_left = static_cast<int64_t>(options.max_requests ? options.max_requests : 10);
  RequestFeed feed(&options, input.lines.get(), input.specs.get(), &shared, &client, 1);
  PreparedRequest scratch;
  int shown = 0;
  while (true) {
    const PreparedRequest* r = feed.Next(&scratch);
    if (r == nullptr && feed.waiting_for_input()) {
      input.lines->AwaitInput(/*timeout_millis=*/-1);
      continue;
    }
    if (r == nullptr) break;
    ++shown;
    if (r->invalid) {
      std::fprintf(out, "# %d: not sent (invalid_url): %s: %s\n\n", shown, r->key.c_str(),
                   r->invalid->c_str());
      continue;
    }
    std::fprintf(out, "# %d: %s %s  (key %s, %zu body bytes)\n%s\n", shown, r->method.c_str(),
                 r->url.ToString().c_str(), r->key.c_str(), r->body.size(),
                 RedactHead(r->head, "").c_str());
  }
  if (input.specs && input.specs->error()) return *input.specs->error();
  return Status::Ok();
}

}  // namespace hammer::load
