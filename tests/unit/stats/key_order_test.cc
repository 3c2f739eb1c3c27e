#include "hammer/stats/key_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace hammer::stats {
namespace {

// The keys in SortedKeyOrder's order.
std::vector<std::string> Sorted(const std::vector<std::string>& keys) {
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> sorted;
  for (size_t i : SortedKeyOrder(views))
    sorted.push_back(keys[i]);
  return sorted;
}

// The keys sorted by std::string_view's operator< (bytes compared as unsigned).
std::vector<std::string> Expected(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end(), [](std::string_view a, std::string_view b) { return a < b; });
  return keys;
}

TEST(SortedKeyOrderTest, EmptyAndSingle) {
  EXPECT_TRUE(SortedKeyOrder({}).empty());
  const std::vector<std::string_view> one = {"http://127.0.0.1/item/1"};
  EXPECT_EQ(SortedKeyOrder(one), std::vector<size_t>{0});
}

TEST(SortedKeyOrderTest, KeysSharingAPrefixSortByTheBytesAfterIt) {
  const std::vector<std::string> keys = {
      "http://127.0.0.1:18090/item/20?ref=1", "http://127.0.0.1:18090/item/3?ref=9",
      "http://127.0.0.1:18090/item/100?ref=5", "http://127.0.0.1:18090/item/2?ref=7",
      "http://127.0.0.1:18090/item/2?ref=10"};
  EXPECT_EQ(Sorted(keys), (std::vector<std::string>{
                              "http://127.0.0.1:18090/item/100?ref=5",
                              "http://127.0.0.1:18090/item/20?ref=1",  // '0' < '?'
                              "http://127.0.0.1:18090/item/2?ref=10",
                              "http://127.0.0.1:18090/item/2?ref=7",
                              "http://127.0.0.1:18090/item/3?ref=9",
                          }));
}

TEST(SortedKeyOrderTest, KeysEqualForMoreThanAWordAfterThePrefixAreComparedWhole) {
  // The common prefix is "/a"; the next 8 bytes ("/1234567") are the same in all three.
  const std::vector<std::string> keys = {"/a/12345678c", "/a/12345678a", "/b/12345678b",
                                         "/a/12345678b"};
  EXPECT_EQ(Sorted(keys), (std::vector<std::string>{"/a/12345678a", "/a/12345678b", "/a/12345678c",
                                                    "/b/12345678b"}));
}

TEST(SortedKeyOrderTest, KeysShorterThanAWordAfterThePrefix) {
  // "/x" is the common prefix and a whole key; a key that ends first sorts first.
  const std::vector<std::string> keys = {"/x12", "/x", "/x1", "/x2", "/x123456789", "/x1"};
  EXPECT_EQ(Sorted(keys),
            (std::vector<std::string>{"/x", "/x1", "/x1", "/x12", "/x123456789", "/x2"}));
}

TEST(SortedKeyOrderTest, EmptyKeyFirst) {
  const std::vector<std::string> keys = {"b", "", "a", "(other)"};
  EXPECT_EQ(Sorted(keys), (std::vector<std::string>{"", "(other)", "a", "b"}));
}

TEST(SortedKeyOrderTest, BytesFrom0x80SortAfterAscii) {
  // As unsigned bytes: 0x7f < 0x80 < 0xff. A signed comparison would put 0x80 and 0xff first.
  const std::vector<std::string> keys = {"/k\xff", "/k\x80", "/k\x7f", "/k\xc3\xa9", "/kz"};
  EXPECT_EQ(Sorted(keys),
            (std::vector<std::string>{"/kz", "/k\x7f", "/k\x80", "/k\xc3\xa9", "/k\xff"}));
}

TEST(SortedKeyOrderTest, ZeroBytesAreNotTheEndOfAKey) {
  // Padding a short key with zeros makes "/k" and "/k\0" the same word: their lengths decide.
  const std::vector<std::string> keys = {std::string("/k\0\0", 4), std::string("/k\0", 3), "/k",
                                         std::string("/k\0\x01", 4)};
  EXPECT_EQ(Sorted(keys), Expected(keys));
  EXPECT_EQ(Sorted(keys).front(), "/k");
}

TEST(SortedKeyOrderTest, RandomKeysMatchStringViewOrder) {
  std::mt19937 random(7);
  const std::string alphabet("\0\x01/19az\x7f\x80\xfe\xff", 11);
  for (const std::string prefix : {"", "/", "http://127.0.0.1:18090/item/"}) {
    for (size_t n : {2, 3, 17, 1000}) {
      std::vector<std::string> keys;
      for (size_t i = 0; i < n; ++i) {
        std::string key = prefix;
        const size_t length = random() % 14;
        for (size_t j = 0; j < length; ++j)
          key += alphabet[random() % alphabet.size()];
        keys.push_back(key);
        if (random() % 4 == 0) keys.push_back(key);  // duplicates
      }
      EXPECT_EQ(Sorted(keys), Expected(keys)) << "prefix " << prefix << ", " << n << " keys";
    }
  }
}

TEST(SortedKeyOrderTest, ThousandsOfUrlsOfSeveralHostsAndOther) {
  // The common prefix is "" ("(other)"), then "http://" within the URLs, then each host's.
  std::mt19937 random(13);
  const std::vector<std::string> hosts = {"http://127.0.0.1:8080/v1/items/",
                                          "http://127.0.0.1:8080/v1/items-archive/",
                                          "http://127.0.0.2:8080/v1/items/", "http://127.0.0.3/",
                                          // '/' < '5' decides, though 'z' > '5' follows
                                          "http://127.0.0.4/z/", "http://127.0.0.45/"};
  std::vector<std::string> keys = {"(other)"};
  for (int i = 0; i < 6000; ++i) {
    keys.push_back(hosts[random() % hosts.size()] + std::to_string(random() % 100000) +
                   (random() % 3 == 0 ? "?page=" + std::to_string(random() % 20) : ""));
  }
  EXPECT_EQ(Sorted(keys), Expected(keys));
}

TEST(SortedKeyOrderTest, LongKeysThatTieWordAfterWord) {
  // 2,000 keys equal for 60 bytes past a first difference, then differing; with duplicates,
  // keys ending inside a word, and zero bytes.
  std::mt19937 random(17);
  const std::string middle(60, 'm');
  std::vector<std::string> keys;
  for (int i = 0; i < 2000; ++i) {
    std::string key = std::string(1, static_cast<char>('a' + random() % 2)) + middle;
    const int tail = static_cast<int>(random() % 12);
    for (int j = 0; j < tail; ++j)
      key += static_cast<char>(random() % 3 == 0 ? '\0' : 'x' + random() % 3);
    keys.push_back(key);
  }
  keys.push_back(keys[5]);
  EXPECT_EQ(Sorted(keys), Expected(keys));
}

TEST(SortedKeyOrderTest, ThousandsOfUrlsOfOneHost) {
  // Enough keys for the radix sort; ids of 1 to 5 digits, so that the 8 bytes after the common
  // prefix hold digits, '?' and the query's first letters.
  std::mt19937 random(11);
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) {
    keys.push_back("http://127.0.0.1:18090/item/" + std::to_string(random() % 100000) +
                   "?ref=" + std::to_string(i));
  }
  EXPECT_EQ(Sorted(keys), Expected(keys));
}

}  // namespace
}  // namespace hammer::stats
