// Route keys and route lines: what `hammer route` writes so that Hadoop or Spark can put each
// shard's documents in one partition, and what `hammer bulk --from-route` reads back.
//
// A route line is "KEY<TAB>PAYLOAD\n":
//  * KEY, with N primaries and K = partitions_per_shard (default 1):
//      routable:    KEY = shard * K + slot, slot = SlotHash(document) % K, so KEY is in
//                   [0, N*K) and shard = KEY / K; with K = 1, KEY is the shard number.
//      unroutable:  KEY = -1 (no _id to hash, routing from _source, another index, ...): such
//                   documents may go to any partition and any node.
//    The slot hash is MurmurHash3 x86_32 with seed 0x68616d72 ("hamr") over the UTF-8 bytes of
//    the _id (else the routing, else the source line): stable across runs and machines, and
//    independent of the shard hash (different seed and bytes), so the K partitions of a shard
//    get even shares.
//  * PAYLOAD, for action+source input: the action line, a TAB, the source line; a delete (no
//    source) is the action line alone. Raw TABs in the action line (legal only as JSON
//    whitespace) are written as spaces, so the first TAB of the payload always ends the action.
//    The source line is kept byte for byte. For one-document-per-line input (--id-field): the
//    line as read, except with --id-from-position, where every payload is action<TAB>source
//    (the action holds the _id, which may come from the position and not from the document),
//    to be read by `hammer bulk --from-route` without --id-field.
//
// Errors: none (the inputs were validated by BulkInputParser). Threads: pure and reentrant.
#pragma once

#include <cstdint>
#include <string>

#include "hammer/search/bulk_input.h"

namespace hammer::search {

inline constexpr int64_t kUnroutableRouteKey = -1;
inline constexpr uint32_t kSlotHashSeed = 0x68616d72;  // "hamr"

// The slot hash of a document (see above).
uint32_t SlotHash(const BulkDocument& document);

// shard * partitions_per_shard + slot_hash % partitions_per_shard; requires shard >= 0 and
// partitions_per_shard >= 1.
int64_t RouteKey(int32_t shard, uint32_t slot_hash, int32_t partitions_per_shard);

// The shard of a routable key (key / partitions_per_shard), or -1 for the unroutable key.
int32_t ShardOfRouteKey(int64_t key, int32_t partitions_per_shard);

// Appends "KEY<TAB>PAYLOAD\n" for `document` read in `format`.
void AppendRouteLine(std::string* out, int64_t key, const BulkDocument& document,
                     InputFormat format);

}  // namespace hammer::search
