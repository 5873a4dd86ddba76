#include "base/text_diff.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace kbench {
namespace {

constexpr absl::string_view kNoNewline = "\\ No newline at end of file\n";
constexpr absl::string_view kTruncated = "... (diff truncated)\n";

// Steps (diagonals visited plus lines compared) the Myers search may take
// over a whole diff before the rest is reported wholesale.
constexpr int64_t kWorkBudget = 50'000'000;

// Lines of `text`, each with its '\n' (only the last may lack it).
std::vector<absl::string_view> SplitLines(absl::string_view text) {
  std::vector<absl::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == absl::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// Myers' diff of two sequences of line ids, in linear space: each call
// finds the middle snake of an optimal edit path and recurses on both
// halves. Marks the lines that are not part of the common subsequence.
class MyersDiff {
 public:
  MyersDiff(const std::vector<int>& a, const std::vector<int>& b)
      : a_(a), b_(b), a_changed_(a.size()), b_changed_(b.size()) {
    const size_t v_size = 2 * ((a.size() + b.size() + 1) / 2) + 2;
    forward_.resize(v_size);
    backward_.resize(v_size);
    Compare(0, static_cast<int>(a.size()), 0, static_cast<int>(b.size()));
  }

  std::vector<bool>& a_changed() { return a_changed_; }
  std::vector<bool>& b_changed() { return b_changed_; }

 private:
  void MarkChanged(int a_lo, int a_hi, int b_lo, int b_hi) {
    for (int i = a_lo; i < a_hi; ++i) a_changed_[i] = true;
    for (int j = b_lo; j < b_hi; ++j) b_changed_[j] = true;
  }

  void Compare(int a_lo, int a_hi, int b_lo, int b_hi) {
    while (a_lo < a_hi && b_lo < b_hi && a_[a_lo] == b_[b_lo]) ++a_lo, ++b_lo;
    while (a_lo < a_hi && b_lo < b_hi && a_[a_hi - 1] == b_[b_hi - 1]) {
      --a_hi, --b_hi;
    }
    if (a_lo == a_hi || b_lo == b_hi) {
      MarkChanged(a_lo, a_hi, b_lo, b_hi);
      return;
    }
    int x = 0;
    int y = 0;
    const int n = a_hi - a_lo;
    const int m = b_hi - b_lo;
    // No split (nothing in common, or out of budget) or a split that would
    // not make progress (cannot happen after the trimming above): all of it
    // is changed.
    if (!MiddleSnake(a_lo, n, b_lo, m, &x, &y) || (x == 0 && y == 0) ||
        (x == n && y == m)) {
      MarkChanged(a_lo, a_hi, b_lo, b_hi);
      return;
    }
    Compare(a_lo, a_lo + x, b_lo, b_lo + y);
    Compare(a_lo + x, a_hi, b_lo + y, b_hi);
  }

  // Searches forward from (0, 0) and backward from (n, m) of the
  // subsequences a_[a0, a0 + n) and b_[b0, b0 + m), both non-empty, for
  // paths that meet. Sets (*x, *y), relative to (a0, b0), to a point on an
  // optimal path; false when the budget ran out or nothing is in common.
  bool MiddleSnake(int a0, int n, int b0, int m, int* x, int* y) {
    const int max_d = (n + m + 1) / 2;
    const int offset = max_d;
    const int delta = n - m;
    const bool odd = (delta & 1) != 0;
    std::fill(forward_.begin(), forward_.begin() + 2 * max_d + 2, -1);
    std::fill(backward_.begin(), backward_.begin() + 2 * max_d + 2, -1);
    forward_[offset + 1] = 0;
    backward_[offset + 1] = 0;
    // Diagonals that left the grid are not searched again.
    int k1_start = 0, k1_end = 0, k2_start = 0, k2_end = 0;
    for (int d = 0; d < max_d; ++d) {
      if (work_ > kWorkBudget) return false;
      // Forward: x on diagonal k = x - y.
      for (int k1 = -d + k1_start; k1 <= d - k1_end; k1 += 2) {
        const int k1_off = offset + k1;
        int x1 = (k1 == -d ||
                  (k1 != d && forward_[k1_off - 1] < forward_[k1_off + 1]))
                     ? forward_[k1_off + 1]
                     : forward_[k1_off - 1] + 1;
        int y1 = x1 - k1;
        const int x1_start = x1;
        while (x1 < n && y1 < m && a_[a0 + x1] == b_[b0 + y1]) ++x1, ++y1;
        work_ += 1 + (x1 - x1_start);
        forward_[k1_off] = x1;
        if (x1 > n) {
          k1_end += 2;  // Ran off the right of the grid.
        } else if (y1 > m) {
          k1_start += 2;  // Ran off the bottom of the grid.
        } else if (odd) {
          const int k2_off = offset + delta - k1;
          if (k2_off >= 0 && k2_off < 2 * max_d + 2 &&
              backward_[k2_off] != -1 && x1 >= n - backward_[k2_off]) {
            *x = x1;
            *y = y1;
            return true;
          }
        }
      }
      // Backward: x counted from the end, on diagonal k = x - y.
      for (int k2 = -d + k2_start; k2 <= d - k2_end; k2 += 2) {
        const int k2_off = offset + k2;
        int x2 = (k2 == -d ||
                  (k2 != d && backward_[k2_off - 1] < backward_[k2_off + 1]))
                     ? backward_[k2_off + 1]
                     : backward_[k2_off - 1] + 1;
        int y2 = x2 - k2;
        const int x2_start = x2;
        while (x2 < n && y2 < m && a_[a0 + n - x2 - 1] == b_[b0 + m - y2 - 1]) {
          ++x2, ++y2;
        }
        work_ += 1 + (x2 - x2_start);
        backward_[k2_off] = x2;
        if (x2 > n) {
          k2_end += 2;
        } else if (y2 > m) {
          k2_start += 2;
        } else if (!odd) {
          const int k1_off = offset + delta - k2;
          if (k1_off >= 0 && k1_off < 2 * max_d + 2 && forward_[k1_off] != -1) {
            const int x1 = forward_[k1_off];
            const int y1 = offset + x1 - k1_off;
            if (x1 >= n - x2) {
              *x = x1;
              *y = y1;
              return true;
            }
          }
        }
      }
    }
    return false;
  }

  const std::vector<int>& a_;
  const std::vector<int>& b_;
  std::vector<bool> a_changed_;
  std::vector<bool> b_changed_;
  std::vector<int> forward_;   // Furthest x per diagonal, forward search.
  std::vector<int> backward_;  // Same for the backward search.
  int64_t work_ = 0;
};

// Sets (*from_changed)[i] / (*to_changed)[j] for the lines that are not in
// a longest common subsequence of `from` and `to` (within the budget).
void MarkChangedLines(const std::vector<absl::string_view>& from,
                      const std::vector<absl::string_view>& to,
                      std::vector<bool>* from_changed,
                      std::vector<bool>* to_changed) {
  // Line contents to small ids; count occurrences on each side.
  absl::flat_hash_map<absl::string_view, int> ids;
  std::vector<int> from_ids, to_ids;
  std::vector<std::pair<int, int>> counts;  // Per id: (in from, in to).
  auto id_of = [&](absl::string_view line) {
    auto [it, inserted] = ids.emplace(line, static_cast<int>(ids.size()));
    if (inserted) counts.emplace_back(0, 0);
    return it->second;
  };
  for (absl::string_view line : from) {
    from_ids.push_back(id_of(line));
    ++counts[from_ids.back()].first;
  }
  for (absl::string_view line : to) {
    to_ids.push_back(id_of(line));
    ++counts[to_ids.back()].second;
  }
  // A line found on one side only is changed; the rest are compared. This
  // keeps the diff minimal and makes unrelated texts cheap.
  from_changed->assign(from.size(), true);
  to_changed->assign(to.size(), true);
  std::vector<int> a, b, a_index, b_index;
  for (size_t i = 0; i < from_ids.size(); ++i) {
    if (counts[from_ids[i]].second > 0) {
      a.push_back(from_ids[i]);
      a_index.push_back(static_cast<int>(i));
    }
  }
  for (size_t j = 0; j < to_ids.size(); ++j) {
    if (counts[to_ids[j]].first > 0) {
      b.push_back(to_ids[j]);
      b_index.push_back(static_cast<int>(j));
    }
  }
  MyersDiff diff(a, b);
  for (size_t i = 0; i < a.size(); ++i) {
    (*from_changed)[a_index[i]] = diff.a_changed()[i];
  }
  for (size_t j = 0; j < b.size(); ++j) {
    (*to_changed)[b_index[j]] = diff.b_changed()[j];
  }
}

// A run of removed lines from[from_start, from_start + removed) replaced by
// to[to_start, to_start + added); either count may be 0.
struct Change {
  int from_start = 0;
  int removed = 0;
  int to_start = 0;
  int added = 0;
  int from_end() const { return from_start + removed; }
  int to_end() const { return to_start + added; }
};

std::vector<Change> CollectChanges(const std::vector<bool>& from_changed,
                                   const std::vector<bool>& to_changed) {
  std::vector<Change> changes;
  const int n = static_cast<int>(from_changed.size());
  const int m = static_cast<int>(to_changed.size());
  int i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && !from_changed[i] && !to_changed[j]) {
      ++i, ++j;
      continue;
    }
    Change change;
    change.from_start = i;
    change.to_start = j;
    while (i < n && from_changed[i]) ++i, ++change.removed;
    while (j < m && to_changed[j]) ++j, ++change.added;
    // Unchanged lines pair up one to one, so this cannot happen.
    if (change.removed == 0 && change.added == 0) break;
    changes.push_back(change);
  }
  return changes;
}

// A hunk header range: 1-based first line and count, as GNU diff prints it
// (",1" left out; an empty range names the line before it).
std::string Range(int start, int count) {
  if (count == 1) return absl::StrCat(start + 1);
  if (count == 0) return absl::StrCat(start, ",0");
  return absl::StrCat(start + 1, ",", count);
}

void AppendLine(char prefix, absl::string_view line, std::string* out) {
  out->push_back(prefix);
  out->append(line.data(), line.size());
  if (line.empty() || line.back() != '\n') {
    out->push_back('\n');
    out->append(kNoNewline.data(), kNoNewline.size());
  }
}

// Cuts `diff` to at most `max_bytes` bytes, marker included, at a line end.
void Truncate(size_t max_bytes, std::string* diff) {
  if (max_bytes == 0 || diff->size() <= max_bytes) return;
  size_t keep = 0;
  if (max_bytes > kTruncated.size()) {
    const size_t last_newline =
        diff->rfind('\n', max_bytes - kTruncated.size() - 1);
    keep = last_newline == std::string::npos ? 0 : last_newline + 1;
  }
  diff->resize(keep);
  diff->append(kTruncated.data(), kTruncated.size());
}

}  // namespace

std::string UnifiedDiff(absl::string_view from, absl::string_view to,
                        const TextDiffOptions& options, TextDiffStats* stats) {
  if (stats != nullptr) *stats = TextDiffStats();
  if (from == to) return "";
  const std::vector<absl::string_view> from_lines = SplitLines(from);
  const std::vector<absl::string_view> to_lines = SplitLines(to);
  std::vector<bool> from_changed, to_changed;
  MarkChangedLines(from_lines, to_lines, &from_changed, &to_changed);
  const std::vector<Change> changes = CollectChanges(from_changed, to_changed);
  if (changes.empty()) return "";

  const int context = std::max(options.context_lines, 0);
  const int n = static_cast<int>(from_lines.size());
  std::string out = absl::StrCat("--- ", options.from_label, "\n+++ ",
                                 options.to_label, "\n");
  TextDiffStats counts;
  for (size_t first = 0; first < changes.size();) {
    // Changes whose unchanged gap is at most 2 * context share a hunk.
    size_t last = first;
    while (last + 1 < changes.size() &&
           changes[last + 1].from_start - changes[last].from_end() <=
               2 * context) {
      ++last;
    }
    const Change& head = changes[first];
    const Change& tail = changes[last];
    // Unchanged lines pair up, so context is as long on both sides.
    const int before = std::min(context, head.from_start);
    const int after = std::min(context, n - tail.from_end());
    const int from_start = head.from_start - before;
    const int to_start = head.to_start - before;
    absl::StrAppend(
        &out, "@@ -", Range(from_start, tail.from_end() + after - from_start),
        " +", Range(to_start, tail.to_end() + after - to_start), " @@\n");
    int i = from_start;
    for (size_t c = first; c <= last; ++c) {
      const Change& change = changes[c];
      for (; i < change.from_start; ++i) AppendLine(' ', from_lines[i], &out);
      for (int k = 0; k < change.removed; ++k) {
        AppendLine('-', from_lines[change.from_start + k], &out);
      }
      for (int k = 0; k < change.added; ++k) {
        AppendLine('+', to_lines[change.to_start + k], &out);
      }
      i = change.from_end();
      counts.removed += change.removed;
      counts.added += change.added;
    }
    for (; i < tail.from_end() + after; ++i) {
      AppendLine(' ', from_lines[i], &out);
    }
    first = last + 1;
  }
  if (stats != nullptr) *stats = counts;
  Truncate(options.max_output_bytes, &out);
  return out;
}

}  // namespace kbench
