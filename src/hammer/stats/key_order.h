// SortedKeyOrder: the bytewise order of a table's keys (std::string_view's operator<), for
// reports that list thousands of rows.
//
// A comparison sort on the keys themselves reads both keys through their pointers at each of
// its n log n comparisons, from the first byte: 10,000 URLs of one host share their first ~28
// bytes, and each comparison goes through those (and, the keys being spread over the heap, a
// cache miss or two) before it decides. Here the keys' common prefix is measured once; the 8
// bytes after it, read once per key as a big-endian integer, order almost every pair, and the
// keys whose 8 bytes tie are sorted the same way from after those bytes (the URLs of several
// hosts tie on their first 8 bytes after "http://"); small sets are compared whole.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace hammer::stats {

// The indices of `keys` sorted by key: keys[order[0]] <= keys[order[1]] <= ..., bytes compared
// as unsigned. Equal keys come in no particular order. The keys are only read.
std::vector<size_t> SortedKeyOrder(std::span<const std::string_view> keys);

}  // namespace hammer::stats
