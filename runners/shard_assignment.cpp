#include "runners/shard_assignment.hpp"

#include <algorithm>
#include <numeric>

namespace sharp::runner {

std::vector<int> assign_shards(const std::vector<double>& costs, int shards) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(shards, 0.0);
  std::vector<int> owner(costs.size(), 0);
  for (std::size_t i : order) {
    const int s = int(std::min_element(load.begin(), load.end()) - load.begin());
    owner[i] = s;
    load[s] += costs[i];
  }
  return owner;
}

std::vector<int> shard_owners(const Experiment& experiment, const Grid& grid, const RunOptions& options) {
  if (!options.shard) return std::vector<int>(grid.size(), 0);
  std::vector<double> costs;
  for (const Point& p : grid.points()) costs.push_back(experiment.estimated_cost(p));
  return assign_shards(costs, options.shard->count);
}

}  // namespace sharp::runner
