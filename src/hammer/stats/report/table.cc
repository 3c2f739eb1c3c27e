#include "hammer/stats/report/table.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

#include "hammer/stats/record.h"

namespace hammer::stats {
namespace {

constexpr size_t kMaxKeyWidth = 60;
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026, one column wide
constexpr size_t kColumns = 9;
constexpr std::array<std::string_view, kColumns> kHeader = {
    "key", "requests", "ok", "errors", "min ms", "p50 ms", "p90 ms", "p99 ms", "max ms",
};

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Terminal columns of UTF-8 text, approximated by its code points.
size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (char c : text)
    width += IsContinuationByte(c) ? 0 : 1;
  return width;
}

// Byte offset just after the first `columns` code points of `text`.
size_t PrefixBytes(std::string_view text, size_t columns) {
  size_t i = 0;
  for (size_t seen = 0; i < text.size(); ++i) {
    if (!IsContinuationByte(text[i]) && seen++ == columns) break;
  }
  return i;
}

std::string DisplayKey(std::string_view key) {
  std::string clean;
  AppendSanitizedKey(clean, key);
  size_t width = DisplayWidth(clean);
  if (width <= kMaxKeyWidth) return clean;
  size_t head = (kMaxKeyWidth - 1) / 2;
  size_t tail = kMaxKeyWidth - 1 - head;
  std::string shortened = clean.substr(0, PrefixBytes(clean, head));
  shortened += kEllipsis;
  shortened += clean.substr(PrefixBytes(clean, width - tail));
  return shortened;
}

std::string Milliseconds(int64_t micros) {
  std::string text = std::to_string(micros / 1000);
  char fraction[4] = {static_cast<char>('0' + micros / 100 % 10),
                      static_cast<char>('0' + micros / 10 % 10),
                      static_cast<char>('0' + micros % 10), '\0'};
  return text + "." + fraction;
}

std::array<std::string, kColumns> Cells(const std::string& key, const KeyStats& stats) {
  std::array<std::string, kColumns> cells;
  cells[0] = key;
  cells[1] = std::to_string(stats.total());
  cells[2] = std::to_string(stats.count);
  cells[3] = std::to_string(stats.errors);
  if (stats.count == 0) {
    for (size_t i = 4; i < cells.size(); ++i)
      cells[i] = "-";
    return cells;
  }
  cells[4] = Milliseconds(stats.min_micros);
  cells[5] = Milliseconds(stats.Percentile(50.0));
  cells[6] = Milliseconds(stats.Percentile(90.0));
  cells[7] = Milliseconds(stats.Percentile(99.0));
  cells[8] = Milliseconds(stats.max_micros);
  return cells;
}

}  // namespace

std::string FormatKeyTable(const std::vector<std::pair<std::string, KeyStats>>& rows,
                           size_t max_rows) {
  std::vector<const std::pair<std::string, KeyStats>*> order;
  order.reserve(rows.size());
  KeyStats total;
  for (const auto& row : rows) {
    order.push_back(&row);
    if (total.CanMerge(row.second)) total.Merge(row.second);  // only hostile input cannot
  }
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (a->second.total() != b->second.total()) return a->second.total() > b->second.total();
    return a->first < b->first;
  });
  size_t shown = max_rows == 0 ? order.size() : std::min(max_rows, order.size());

  std::vector<std::array<std::string, kColumns>> table;
  table.reserve(shown + 2);
  std::array<std::string, kColumns> header;
  for (size_t i = 0; i < header.size(); ++i)
    header[i] = kHeader[i];
  table.push_back(header);
  for (size_t i = 0; i < shown; ++i)
    table.push_back(Cells(DisplayKey(order[i]->first), order[i]->second));
  table.push_back(Cells("TOTAL", total));

  std::array<size_t, kColumns> widths{};
  for (const auto& cells : table) {
    for (size_t i = 0; i < cells.size(); ++i)
      widths[i] = std::max(widths[i], DisplayWidth(cells[i]));
  }
  std::string out;
  auto append_row = [&](const std::array<std::string, kColumns>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      size_t pad = widths[i] - DisplayWidth(cells[i]);
      if (i == 0) {
        out += cells[i];
        out.append(pad, ' ');
      } else {
        out.append(2 + pad, ' ');
        out += cells[i];
      }
    }
    out += '\n';
  };
  for (size_t i = 0; i + 1 < table.size(); ++i)
    append_row(table[i]);
  if (shown < order.size()) {
    out += kEllipsis;
    out += ' ';
    out += std::to_string(order.size() - shown);
    out += order.size() - shown == 1 ? " more key\n" : " more keys\n";
  }
  append_row(table.back());
  return out;
}

}  // namespace hammer::stats
