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
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace hammer::stats {

// The indices of `keys` sorted by key: keys[order[0]] <= keys[order[1]] <= ..., bytes compared
// as unsigned. Equal keys come in no particular order. The keys are only read. With `distinct`,
// *distinct tells whether no two keys are equal (found on the way: keys that differ in their
// words are never compared again).
std::vector<size_t> SortedKeyOrder(std::span<const std::string_view> keys,
                                   bool* distinct = nullptr);

// How many first bytes `a` and `b` share, at most `limit`, eight at a time; the bytes before
// `from` (at most the shorter's size and `limit`) are taken as shared, not compared.
size_t SharedPrefixLength(std::string_view a, std::string_view b, size_t from = 0,
                          size_t limit = std::string_view::npos);

// The 8 bytes of `key` from `offset` (at most its size) as a big-endian integer, zeros past the
// key's end. Two keys that share their first `offset` bytes compare as their words do when the
// words differ: the first byte that differs decides both (as unsigned), and a key that ends
// first has zeros where the other has bytes, so it is the smaller or the words are equal.
uint64_t KeyWordAt(std::string_view key, size_t offset);

}  // namespace hammer::stats
