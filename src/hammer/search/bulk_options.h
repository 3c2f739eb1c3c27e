// BulkOptions: everything a `hammer bulk` run is configured with (the CLI fills it).
#pragma once

#include <string>

#include "hammer/http/client.h"
#include "hammer/http/request_writer.h"
#include "hammer/search/bulk_batch.h"
#include "hammer/search/bulk_feeder.h"
#include "hammer/search/bulk_writer.h"
#include "hammer/search/cluster_discovery.h"

namespace hammer::search {

enum class BulkRouting {
  kShardAware,  // each shard's batches go to the node holding its primary
  kRoundRobin,  // batches in input order, to the nodes in turn (a client that does not route)
};

struct BulkOptions {
  DiscoveryOptions discovery;  // seeds (--cluster), target (--index), headers
  http::ClientOptions client;  // connect timeout, TLS
  FeederOptions feeder;        // input, format, batch limits, gzip
  WriterSettings writer;       // retries, timeout, gzip
  BulkRouting routing = BulkRouting::kShardAware;
  int writers_per_shard = 2;  // K concurrent requests per lane
  Nanos refresh_interval = 30 * kSecond;
  Nanos node_down_period = 5 * kSecond;  // a node that failed is avoided this long
  Nanos min_refresh_gap = 1 * kSecond;   // refreshes triggered by failures: at most this often
  std::string dead_letter_path;          // "" → only counted (first few on stderr)
};

}  // namespace hammer::search
