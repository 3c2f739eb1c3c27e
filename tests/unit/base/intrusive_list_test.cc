#include "hammer/base/intrusive_list.h"

#include <gtest/gtest.h>

#include <vector>

namespace hammer {
namespace {

struct Item {
  explicit Item(int v) : value(v) {}
  int value;
  IntrusiveLink<Item> link;
};
using ItemList = IntrusiveList<Item, &Item::link>;

std::vector<int> Values(const ItemList& list) {
  std::vector<int> out;
  for (Item* i = list.front(); i != nullptr; i = i->link.next)
    out.push_back(i->value);
  return out;
}

TEST(IntrusiveListTest, KeepsInsertionOrderAndRemovesAnywhere) {
  Item a(1), b(2), c(3), d(4);
  ItemList list;
  EXPECT_TRUE(list.empty());
  for (Item* i : {&a, &b, &c, &d})
    list.PushBack(i);
  EXPECT_EQ(Values(list), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(list.size(), 4u);
  list.Remove(&c);  // middle
  list.Remove(&a);  // front
  list.Remove(&d);  // back
  EXPECT_EQ(Values(list), (std::vector<int>{2}));
  EXPECT_EQ(list.front(), &b);
  EXPECT_FALSE(ItemList::Contains(a));
  EXPECT_TRUE(ItemList::Contains(b));
  list.Remove(&a);  // not linked: nothing happens
  EXPECT_EQ(list.size(), 1u);
  list.PushBack(&a);  // re-linked at the back
  EXPECT_EQ(Values(list), (std::vector<int>{2, 1}));
  list.Remove(&b);
  list.Remove(&a);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.front(), nullptr);
}

}  // namespace
}  // namespace hammer
