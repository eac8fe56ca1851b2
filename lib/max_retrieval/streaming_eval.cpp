#include "max_retrieval/streaming_eval.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "core/parallel_for.hpp"
#include "nn/gemm.hpp"
#include "nn/mlp.hpp"
#include "nn/omp_threads.hpp"

namespace sharp::max_retrieval {

// How one normaliser is evaluated in the stream: a softmax-family normaliser by its temperature
// (normalisers/temperature.hpp), any other on the whole row.
struct StreamingEvaluator::Rule {
  std::shared_ptr<norm::Normaliser> normaliser;
  const norm::Temperature* temperature = nullptr;  // of `normaliser`; nullptr: the whole row
  bool streams() const { return temperature != nullptr; }
  bool entropy_pass() const { return temperature != nullptr && temperature->needs_entropy_pass(); }
};

// Per-thread scratch, sized for one chunk (and, with FullRow normalisers, one row of n logits).
struct StreamingEvaluator::Workspace {
  std::vector<float> x, priorities, h, e, w;
  std::vector<std::int32_t> classes;
  nn::MlpCache<float> psi, query, phi;
  std::vector<float> row_e, row_p;  // [n] FullRow only
  std::vector<double> row_v;  // [K_full, W]
};

namespace {

// The map_items highest-priority items seen so far: (priority, index, logit), by decreasing
// priority, ties to the lower index (items arrive in index order, so a tie never displaces).
struct TopItems {
  struct Entry {
    float priority;
    std::size_t index;
    float logit;
  };
  std::size_t capacity = 0;
  std::vector<Entry> entries;
  void offer(float priority, std::size_t index, float logit) {
    if (capacity == 0) return;
    if (entries.size() == capacity && !(priority > entries.back().priority)) return;
    auto at = std::find_if(entries.begin(), entries.end(), [&](const Entry& x) { return priority > x.priority; });
    entries.insert(at, Entry{priority, index, logit});
    if (entries.size() > capacity) entries.pop_back();
  }
};

}  // namespace

StreamingEvaluator::StreamingEvaluator(const ModelLayout& layout, const float* params,
                                       const std::vector<norm::Spec>& normalisers, std::size_t chunk_items)
    : layout_(layout), params_(params), chunk_(std::max<std::size_t>(1, chunk_items)) {
  if (normalisers.empty()) throw BadInput("evaluation needs at least one normaliser");
  for (const norm::Spec& spec : normalisers) {
    Rule r;
    r.normaliser = norm::make_normaliser(spec);
    r.temperature = r.normaliser->temperature();
    rules_.push_back(std::move(r));
  }
}

StreamingEvaluator::~StreamingEvaluator() = default;

std::size_t StreamingEvaluator::normalisers() const { return rules_.size(); }

SampleResult StreamingEvaluator::evaluate(std::uint64_t sample_key, std::size_t n, std::size_t map_items) const {
  nn::OmpThreadsScope serial_blas(1);
  Workspace ws;
  return run(sample_key, n, map_items, ws);
}

SampleResult StreamingEvaluator::run(std::uint64_t key, std::size_t n, std::size_t map_items, Workspace& ws) const {
  if (n == 0) throw BadInput("evaluation sets need n >= 1 items");
  const std::size_t W = layout_.config.width, d = layout_.head.d, K = rules_.size();
  const std::size_t C = std::min(chunk_, n);
  const float* P = params_;

  // Query side, once per sample: u = W_Kᵀ W_Q h_q / √d  [W].
  const float q = query_of(key);
  std::vector<float> hq(W), qd(d), u(W);
  nn::mlp_forward(hq.data(), &q, layout_.query, P, 1, ws.query);
  nn::gemm(nn::Trans::No, nn::Trans::Yes, 1, d, W, 1.0f, hq.data(), P + layout_.W_Q, 0.0f, qd.data());
  nn::gemm(nn::Trans::No, nn::Trans::No, 1, W, d, float(1.0 / std::sqrt(double(d))), qd.data(), P + layout_.W_K, 0.0f,
           u.data());

  ws.x.resize(C * kItemFeatures);
  ws.priorities.resize(C);
  ws.classes.resize(C);
  ws.h.resize(C * W);
  ws.e.resize(C);
  ws.w.resize(C);
  bool any_full_row = false;
  for (const Rule& r : rules_) any_full_row |= !r.streams();
  if (any_full_row) {
    ws.row_e.resize(n);
    ws.row_p.resize(n);
  }

  // One accumulator per streaming normaliser at its β for n keys; for a temperature that needs the
  // entropy pass (adaptive), the first pass is its β = 1 accumulator.
  std::vector<OnlineAttention> acc;
  acc.reserve(K);
  for (const Rule& r : rules_) acc.emplace_back(r.streams() ? r.temperature->beta(n) : 1.0, W);

  // Items [first, first + count): features, ψ, logits.
  auto item_chunk = [&](std::size_t first, std::size_t count) {
    generate_items(key, first, count, ws.x.data(), ws.priorities.data(), ws.classes.data());
    nn::mlp_forward(ws.h.data(), ws.x.data(), layout_.psi, P, count, ws.psi);
    nn::gemv(nn::Trans::No, count, W, 1.0f, ws.h.data(), u.data(), 0.0f, ws.e.data());
  };

  // Pass 1.
  SampleResult result;
  float best_priority = -1.0f;
  float best_logit = 0.0f;
  float top_logit = -std::numeric_limits<float>::infinity();
  std::size_t top_index = 0;
  std::vector<float> h_max(W);  // ψ of the true maximum, for the oracle
  TopItems top;
  top.capacity = std::min(map_items, n);
  for (std::size_t first = 0; first < n; first += C) {
    const std::size_t count = std::min(C, n - first);
    item_chunk(first, count);
    for (std::size_t j = 0; j < count; ++j) {
      if (ws.priorities[j] > best_priority) {
        best_priority = ws.priorities[j];
        result.argmax = std::int32_t(first + j);
        result.label = ws.classes[j];
        best_logit = ws.e[j];
        std::copy_n(ws.h.data() + j * W, W, h_max.data());
      }
      if (ws.e[j] > top_logit) {
        top_logit = ws.e[j];
        top_index = first + j;
      }
      top.offer(ws.priorities[j], first + j, ws.e[j]);
    }
    for (std::size_t k = 0; k < K; ++k)
      if (rules_[k].streams()) acc[k].add(ws.e.data(), ws.h.data(), count, ws.w.data());
    if (any_full_row)
      std::copy(ws.e.begin(), ws.e.begin() + std::ptrdiff_t(count), ws.row_e.begin() + std::ptrdiff_t(first));
  }

  // Between the passes: β from the β = 1 entropy where the temperature needs it (a second pass
  // unless β = 1); the exact normaliser on full rows.
  std::vector<bool> again(K, false);
  bool second_pass = any_full_row;
  for (std::size_t k = 0; k < K; ++k) {
    if (!rules_[k].entropy_pass()) continue;
    const double beta = rules_[k].temperature->beta_after(acc[k].entropy());
    if (beta != 1.0) {
      acc[k] = OnlineAttention(beta, W);
      again[k] = second_pass = true;
    }
  }
  std::vector<std::size_t> full_rows;  // rule index per full-row normaliser
  for (std::size_t k = 0; k < K; ++k)
    if (!rules_[k].streams()) full_rows.push_back(k);
  ws.row_v.assign(full_rows.size() * W, 0.0);
  std::vector<std::vector<float>> full_p(full_rows.size());
  for (std::size_t f = 0; f < full_rows.size(); ++f) {
    full_p[f].resize(n);
    rules_[full_rows[f]].normaliser->forward(ws.row_e.data(), full_p[f].data(), 1, n);
  }

  // Pass 2: the items again (the same chunks, so the same h and e bits).
  if (second_pass) {
    std::vector<float> chunk_v(W);
    for (std::size_t first = 0; first < n; first += C) {
      const std::size_t count = std::min(C, n - first);
      item_chunk(first, count);
      for (std::size_t k = 0; k < K; ++k)
        if (again[k]) acc[k].add(ws.e.data(), ws.h.data(), count, ws.w.data());
      for (std::size_t f = 0; f < full_rows.size(); ++f) {
        nn::gemv(nn::Trans::Yes, count, W, 1.0f, ws.h.data(), full_p[f].data() + first, 0.0f, chunk_v.data());
        for (std::size_t j = 0; j < W; ++j) ws.row_v[f * W + j] += double(chunk_v[j]);
      }
    }
  }

  result.ranking = top_index == std::size_t(result.argmax);

  // Outputs: c [K + 1, W] = Σ α_i h_i per normaliser, then the oracle's ψ(true maximum) → z = c W_Vᵀ
  // → φ → logits [K + 1, 10].
  std::vector<float> c((K + 1) * W), z((K + 1) * d), logits((K + 1) * kClasses);
  std::copy(h_max.begin(), h_max.end(), c.begin() + std::ptrdiff_t(K * W));
  result.outcomes.resize(K);
  std::size_t f = 0;
  for (std::size_t k = 0; k < K; ++k) {
    NormaliserOutcome& o = result.outcomes[k];
    if (!rules_[k].streams()) {
      const std::vector<float>& p = full_p[f];
      for (std::size_t j = 0; j < W; ++j) c[k * W + j] = float(ws.row_v[f * W + j]);
      o.entropy = norm::entropy(p.data(), n);
      o.weight_on_max = p[std::size_t(result.argmax)];
      o.beta = 1.0;  // no temperature
      for (const auto& t : top.entries) o.map.push_back(p[t.index]);
      ++f;
    } else {
      acc[k].weighted_mean(c.data() + k * W);
      o.entropy = acc[k].entropy();
      o.weight_on_max = acc[k].weight(best_logit);
      o.beta = acc[k].beta();
      for (const auto& t : top.entries) o.map.push_back(acc[k].weight(t.logit));
    }
  }
  nn::gemm(nn::Trans::No, nn::Trans::Yes, K + 1, d, W, 1.0f, c.data(), P + layout_.W_V, 0.0f, z.data());
  nn::mlp_forward(logits.data(), z.data(), layout_.phi, P, K + 1, ws.phi);
  const float* oracle = logits.data() + K * kClasses;
  result.oracle = std::max_element(oracle, oracle + kClasses) - oracle == result.label;
  for (std::size_t k = 0; k < K; ++k) {
    NormaliserOutcome& o = result.outcomes[k];
    const float* l = logits.data() + k * kClasses;
    std::size_t best = 0;
    for (std::size_t cls = 0; cls < kClasses; ++cls) {
      if (!std::isfinite(l[cls])) throw NumericError("evaluation: non-finite class logit");
      o.logits[cls] = l[cls];
      if (l[cls] > l[best]) best = cls;
    }
    o.prediction = std::int32_t(best);
  }
  return result;
}

std::vector<SampleResult> StreamingEvaluator::evaluate_set(std::uint64_t set_key, std::size_t first, std::size_t count,
                                                           std::size_t n, std::size_t map_samples,
                                                           std::size_t map_items, int threads) const {
  std::vector<SampleResult> results(count);
  threads = std::max(1, threads);
  std::vector<Workspace> workspaces(static_cast<std::size_t>(threads));
  // One owner of the threads: OpenMP over samples; BLAS runs serially inside the region (and is
  // told so for the one-thread case, where the region is not active).
  nn::OmpThreadsScope scope(threads);
  parallel_for(count, Loop{"max-retrieval/eval-samples", threads}, [&](std::size_t j, int thread) {
    const std::size_t s = first + j;
    results[j] = run(set_sample_key(set_key, std::int64_t(s)), n, s < map_samples ? map_items : 0,
                     workspaces[std::size_t(thread)]);
  });
  return results;
}

}  // namespace sharp::max_retrieval
