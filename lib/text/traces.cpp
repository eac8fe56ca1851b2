// The CLRS traces (docs/science.md#clrs-text-format): each algorithm run on one input, recording its
// hint states as the text prints them (traces.hpp).
#include "text/traces.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/errors.hpp"

namespace sharp::text {
namespace {

std::string pair_state(int a, int b) {
  std::string s = "(";
  s.append(std::to_string(a)).append(", ").append(std::to_string(b)).push_back(')');
  return s;
}

std::string format_mask(const std::vector<int>& mask) {
  std::string s = "[";
  for (std::size_t i = 0; i < mask.size(); ++i) {
    if (i) s.push_back(' ');
    s.append(std::to_string(mask[i]));
  }
  s.push_back(']');
  return s;
}

Trace minimum(const std::vector<Milli>& a) {
  Trace e;
  int best = 0;
  e.states.push_back("0");
  for (int i = 1; i < static_cast<int>(a.size()); ++i) {
    if (a[best] > a[i]) best = i;  // strict: the first minimum wins
    e.states.push_back(std::to_string(best));
  }
  e.output = std::to_string(best);
  return e;
}

Trace binary_search(const std::vector<Milli>& a, Milli target) {
  Trace e;
  int low = 0, high = static_cast<int>(a.size()) - 1;
  e.states.push_back(pair_state(low, high));
  while (low < high) {
    const int mid = (low + high) / 2;
    if (target <= a[mid]) {
      high = mid;
    } else {
      low = mid + 1;
    }
    e.states.push_back(pair_state(low, high));
  }
  e.output = std::to_string(high);
  return e;
}

Trace kadane(const std::vector<Milli>& a) {
  Trace e;
  int best_low = 0, best_high = 0, i = 0;
  long long best_sum = a[0], sum = a[0];
  e.states.push_back(pair_state(0, 0));
  for (int j = 1; j < static_cast<int>(a.size()); ++j) {
    const long long x = a[j];
    if (sum + x >= x) {
      sum += x;
    } else {
      i = j;
      sum = x;
    }
    if (sum > best_sum) {
      best_low = i;
      best_high = j;
      best_sum = sum;
    }
    e.states.push_back(pair_state(best_low, best_high));
  }
  e.output = std::to_string(best_low) + ", " + std::to_string(best_high);
  return e;
}

Trace activity_selector(const std::vector<Milli>& s, const std::vector<Milli>& f) {
  Trace e;
  const int n = static_cast<int>(s.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return f[x] < f[y]; });
  std::vector<int> selected(n, 0);
  e.states.push_back(format_mask(selected));
  selected[order[0]] = 1;
  int k = order[0];
  e.states.push_back(format_mask(selected));
  for (int m = 1; m < n; ++m) {
    if (s[order[m]] >= f[k]) {
      selected[order[m]] = 1;
      k = order[m];
    }
    e.states.push_back(format_mask(selected));
  }
  e.output = format_mask(selected);
  return e;
}

Trace insertion_sort(std::vector<Milli> a) {
  Trace e;
  e.states.push_back(format_array(a));
  for (std::size_t j = 1; j < a.size(); ++j) {
    const Milli key = a[j];
    std::ptrdiff_t i = static_cast<std::ptrdiff_t>(j) - 1;
    while (i >= 0 && a[i] > key) {
      a[i + 1] = a[i];
      --i;
    }
    a[i + 1] = key;
    e.states.push_back(format_array(a));
  }
  e.output = format_array(a);
  return e;
}

Trace bubble_sort(std::vector<Milli> a) {
  Trace e;
  const std::size_t n = a.size();
  e.states.push_back(format_array(a));
  for (std::size_t i = 0; i + 1 < n; ++i) {
    for (std::size_t j = n - 1; j > i; --j) {
      if (a[j] < a[j - 1]) std::swap(a[j], a[j - 1]);
      e.states.push_back(format_array(a));  // one state per comparison, swapped or not
    }
  }
  e.output = format_array(a);
  return e;
}

// A state after every max_heapify call (also each recursive one) and after every extraction swap.
void max_heapify(std::vector<Milli>& a, std::size_t i, std::size_t heap_size, Trace& e) {
  const std::size_t l = 2 * i + 1, r = 2 * i + 2;
  std::size_t largest = (l < heap_size && a[l] > a[i]) ? l : i;
  if (r < heap_size && a[r] > a[largest]) largest = r;
  if (largest != i) std::swap(a[i], a[largest]);
  e.states.push_back(format_array(a));
  if (largest != i) max_heapify(a, largest, heap_size, e);
}

Trace heapsort(std::vector<Milli> a) {
  Trace e;
  const std::size_t n = a.size();
  e.states.push_back(format_array(a));
  for (std::size_t i = n; i-- > 0;) max_heapify(a, i, n, e);
  std::size_t heap_size = n;
  for (std::size_t i = n - 1; i >= 1; --i) {
    std::swap(a[0], a[i]);
    --heap_size;
    e.states.push_back(format_array(a));
    max_heapify(a, 0, heap_size, e);
  }
  e.output = format_array(a);
  return e;
}

// Lomuto partition as CLRS: a state after every comparison and after the final pivot swap.
// CLRS pushes no state before the first comparison, so the first state (initial_trace) is the one
// after it (which equals the input: A[p] <= x swaps A[p] with itself, A[p] > x swaps nothing).
void quicksort_range(std::vector<Milli>& a, std::ptrdiff_t p, std::ptrdiff_t r, Trace& e) {
  if (p >= r) return;
  const Milli x = a[r];
  std::ptrdiff_t i = p - 1;
  for (std::ptrdiff_t j = p; j < r; ++j) {
    if (a[j] <= x) {
      ++i;
      std::swap(a[i], a[j]);
    }
    e.states.push_back(format_array(a));
  }
  std::swap(a[i + 1], a[r]);
  e.states.push_back(format_array(a));
  quicksort_range(a, p, i, e);
  quicksort_range(a, i + 2, r, e);
}

Trace quicksort(std::vector<Milli> a) {
  Trace e;
  quicksort_range(a, 0, static_cast<std::ptrdiff_t>(a.size()) - 1, e);
  e.output = format_array(a);
  return e;
}

// The value of the highest-priority item; ties go to the lower index. No hint states (no trace).
Trace max_value(const std::vector<Milli>& priority, const std::vector<Milli>& value) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < priority.size(); ++i)
    if (priority[i] > priority[best]) best = i;  // strict: the first of equal priorities wins
  Trace e;
  e.output = format_milli(value[best]);
  return e;
}

void check_input(Algorithm a, const TaskInput& in) {
  const std::string name(algorithm_name(a));
  if (a == Algorithm::max_value) {
    if (in.priority.size() != in.value.size())
      throw BadInput(name + ": priority and value need the same number of items");
    if (in.priority.size() < 2) throw BadInput(name + ": needs at least 2 items");
    return;
  }
  if (a == Algorithm::activity_selector) {
    if (in.s.size() != in.f.size()) throw BadInput(name + ": s and f need the same number of values");
    if (in.s.size() < 2) throw BadInput(name + ": needs at least 2 activities");
    for (std::size_t i = 0; i < in.s.size(); ++i) {
      if (in.s[i] > in.f[i]) throw BadInput(name + ": activity " + std::to_string(i) + " starts after it finishes");
    }
    return;
  }
  if (in.key.size() < 2) throw BadInput(name + ": needs at least 2 keys");
  if (a == Algorithm::binary_search && !std::is_sorted(in.key.begin(), in.key.end())) {
    throw BadInput(name + ": the keys must be sorted");
  }
}

}  // namespace

std::string format_array(const std::vector<Milli>& values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) s += ' ';
    s += format_milli(values[i]);
  }
  return s + "]";
}

Trace run_traced(Algorithm a, const TaskInput& in) {
  check_input(a, in);
  switch (a) {
    case Algorithm::minimum: return minimum(in.key);
    case Algorithm::binary_search: return binary_search(in.key, in.target);
    case Algorithm::find_maximum_subarray_kadane: return kadane(in.key);
    case Algorithm::activity_selector: return activity_selector(in.s, in.f);
    case Algorithm::insertion_sort: return insertion_sort(in.key);
    case Algorithm::bubble_sort: return bubble_sort(in.key);
    case Algorithm::heapsort: return heapsort(in.key);
    case Algorithm::quicksort: return quicksort(in.key);
    case Algorithm::max_value: return max_value(in.priority, in.value);
  }
  throw BadInput("unknown algorithm");
}

}  // namespace sharp::text
