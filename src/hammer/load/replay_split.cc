#include "hammer/load/replay_split.h"

#include <charconv>
#include <string>

#include "hammer/base/strings.h"

namespace hammer::load {

namespace {

constexpr int kMaxParts = 1'000'000;

}  // namespace

Result<SplitBy> ParseSplitBy(std::string_view text) {
  if (text == "connection") return SplitBy::kConnection;
  if (text == "url") return SplitBy::kUrl;
  return Status::Error("--split-by: expected connection or url, got " + QuoteInput(text));
}

Result<ReplaySplit> ReplaySplit::Parse(std::string_view text, SplitBy by) {
  auto bad = [&](const std::string& why) {
    return Status::Error("--split: " + why + ", got " + QuoteInput(text));
  };
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad("expected i/N, e.g. 0/4 (part 0 of 4)");
  int index = -1;
  int count = 0;
  std::string_view index_text = text.substr(0, slash);
  std::string_view count_text = text.substr(slash + 1);
  auto parse = [](std::string_view digits, int* out) {
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), *out);
    return error == std::errc() && end == digits.data() + digits.size() && !digits.empty();
  };
  if (!parse(index_text, &index) || !parse(count_text, &count) || index < 0) {
    return bad("expected i/N with whole numbers, e.g. 0/4 (part 0 of 4)");
  }
  if (count < 1 || count > kMaxParts) return bad("N must be 1 to 1000000");
  if (index >= count) {
    return bad("parts count from 0, so i must be below N (0/" + std::to_string(count) + " to " +
               std::to_string(count - 1) + "/" + std::to_string(count) + ")");
  }
  return ReplaySplit(index, count, by);
}

uint64_t ReplaySplit::Hash(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  for (char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;  // FNV-1a 64 prime
  }
  // SplitMix64's finalizer: every input bit moves the low bits the modulo reads.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

int ReplaySplit::PartOf(const RequestSpec& spec) const {
  if (count_ == 1) return 0;
  const std::string_view key =
      by_ == SplitBy::kConnection && !spec.client.empty() ? spec.client : spec.url;
  return static_cast<int>(Hash(key) % static_cast<uint64_t>(count_));
}

}  // namespace hammer::load
