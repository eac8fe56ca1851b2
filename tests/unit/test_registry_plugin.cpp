// A normaliser added in this file alone (docs/architecture.md#adding-a-remedy): defined and
// registered here, then used by name through the library exactly as the built-in remedies are — by
// the max-retrieval trainer (learning its parameter), by the transformer trained on CLRS-Text
// samples, by streaming evaluation and by the transformer's forward pass (blockwise at inference).
// The last test fails if any other file of the repository names it: this file is all that adding a
// remedy to the library takes.
//
// The remedy: softmax at temperature τ, p = softmax(z/τ), τ > 0 (default 1), learned as τ = exp(t)
// from t₀ = 0. It is softmax(β·z) with β = 1/τ, a member of the softmax family by its temperature;
// so wherever the library runs it, it must give the bits of softmax:beta=1/τ (τ = 0.5: β = 2
// exactly) — which holds only if the library asked it for its temperature and not for its name.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "max_retrieval/streaming_eval.hpp"
#include "max_retrieval/trainer.hpp"
#include "normalisers/learned_scalars.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/softmax_family.hpp"
#include "support/finite_differences.hpp"
#include "support/random_rows.hpp"
#include "text/tokeniser.hpp"
#include "text_model/task_mix.hpp"
#include "text_model/teacher_forced.hpp"
#include "text_model/token_batch.hpp"
#include "transformer/blockwise_attention.hpp"
#include "transformer/layout.hpp"
#include "transformer/trainer.hpp"

namespace {

using namespace sharp;
using norm::NormaliserRegistration;
using norm::ParameterRange;
using norm::Spec;
using norm::Temperature;

constexpr const char* kName = "tau_softmax";

// ---- the remedy: its class and its registry entry ----------------------------------------------

class TauSoftmax final : public norm::SoftmaxFamily {
 public:
  explicit TauSoftmax(const Spec& spec)
      : SoftmaxFamily(spec, Temperature::fixed(1.0 / spec.param("tau"))), tau_(spec.param("tau")) {}
  std::vector<std::string> parameter_names() const override { return {"tau"}; }

 protected:
  // β = 1/τ: dL/dτ = dL/dβ · (−1/τ²).
  void parameter_gradients(double dbeta, std::size_t, double* grad_params) const override {
    grad_params[0] = -dbeta / (tau_ * tau_);
  }

 private:
  double tau_;
};

const NormaliserRegistration kRegistration{{
    .name = kName,
    .formula = "p = softmax(z/τ)",
    .section = "temperature",
    .example = std::string(kName) + ":tau=0.5",
    .parameters = {{"tau", 1.0, ParameterRange::above(0.0), "temperature"}},
    .learnable = {{
        .key = "tau",
        .parameterisation = "`τ = exp(t)`",
        .start = "`t₀ = 0` (`τ₀ = 1`)",
        .initial_raw = [](std::size_t) { return 0.0; },
        .value = [](double t) { return std::exp(t); },
        .derivative = [](double t) { return std::exp(t); },
    }},
    .make = [](const Spec& s) { return std::make_unique<TauSoftmax>(s); },
}};

// ---- helpers ------------------------------------------------------------------------------------

std::string spec(const std::string& params = "") { return std::string(kName) + params; }

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
std::vector<T> forward(const std::string& text, const std::vector<T>& z, std::size_t rows) {
  std::vector<T> p(z.size());
  norm::make_normaliser(text)->forward(z.data(), p.data(), rows, z.size() / rows);
  return p;
}

max_retrieval::TrainConfig retrieval_config(const std::string& normaliser) {
  max_retrieval::TrainConfig c;
  c.model = {16, 1, normaliser, 12};
  c.batch = 24;
  c.train_n = 12;
  c.schedule = {nn::ScheduleKind::Constant, 3e-2, 8, 0, 0.1};
  return c;
}

transformer::TrainerConfig text_config(const std::string& normaliser) {
  transformer::TrainerConfig c;
  c.model.layers = 2;
  c.model.heads = 2;
  c.model.d_model = 16;
  c.model.vocab = std::size_t(text::vocabulary_size());
  c.model.normaliser = normaliser;
  c.model.train_length = 48;
  c.schedule.kind = nn::ScheduleKind::Constant;
  c.schedule.lr = 1e-2;
  return c;
}

// CLRS-Text samples of `minimum` at length 4, as the text trainer draws them.
std::vector<text::Sample> text_samples(std::uint64_t key, std::uint64_t first, std::size_t count) {
  const text_model::TaskMix mix{{text::Algorithm::minimum}, {4}, false};
  std::vector<text::Sample> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(text_model::draw_mixed(mix, key, first + i));
  return out;
}

void train_text(transformer::Trainer& trainer, int steps) {
  for (int s = 0; s < steps; ++s) {
    const text_model::TokenBatch b = text_model::make_token_batch(text_samples(7, std::uint64_t(s) * 4, 4));
    const transformer::StepStats st = trainer.step(b.inputs.data(), b.targets.data(), b.batch, b.length);
    ASSERT_TRUE(std::isfinite(st.loss));
  }
}

// ---- the tests ----------------------------------------------------------------------------------

TEST(RegistryPlugin, IsRegisteredByItsEntryAlone) {
  const std::vector<std::string> names = norm::normaliser_names();
  EXPECT_NE(std::find(names.begin(), names.end(), kName), names.end());
  EXPECT_EQ(norm::parse_spec(spec()).param("tau"), 1.0);                       // the default
  EXPECT_EQ(norm::format_spec(norm::parse_spec(spec(":tau=0.5"))), spec(":tau=0.5"));
  try {
    norm::parse_spec(spec(":tau=0"));
    ADD_FAILURE() << "tau = 0 accepted";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("allowed: tau > 0"), std::string::npos) << e.what();
  }
  EXPECT_NE(norm::learnable_parameters_text().find(spec(":tau")), std::string::npos);
  const norm::LearnableSpec learned = norm::parse_learnable_spec(spec(":tau=learn"), 16);
  ASSERT_EQ(learned.learned, std::vector<std::string>{"tau"});
  EXPECT_EQ(learned.spec.param("tau"), 1.0);                                    // exp(t₀ = 0)
  const auto nz = norm::make_normaliser(spec());
  ASSERT_NE(nz->temperature(), nullptr);
  EXPECT_TRUE(transformer::blockwise_supported(*nz));
}

// Short rows go to the lane kernels, long ones to the block kernels (split across threads from
// 2^16 entries): the plugin takes them all, with softmax:beta=2's bits.
TEST(RegistryPlugin, RunsOnTheSoftmaxKernelsByItsTemperature) {
  for (const std::size_t n : {std::size_t(16), std::size_t(300), std::size_t(1) << 16}) {
    const std::size_t rows = n > 1000 ? 1 : 9;
    const std::vector<double> z = test::random_normal(rows * n, 100 + n, 3.0);
    const std::vector<float> zf(z.begin(), z.end());
    EXPECT_TRUE(same_bits(forward(spec(":tau=0.5"), z, rows), forward("softmax:beta=2", z, rows))) << n;
    EXPECT_TRUE(same_bits(forward(spec(":tau=0.5"), zf, rows), forward("softmax:beta=2", zf, rows))) << n;
  }
}

TEST(RegistryPlugin, BackwardAgreesWithFiniteDifferences) {
  const std::size_t rows = 3, n = 20;
  const std::vector<double> z = test::random_normal(rows * n, 5, 2.0), v = test::random_normal(rows * n, 6);
  for (const double tau : {0.5, 1.3}) {
    const std::string text = spec(":tau=" + std::to_string(tau));
    const auto nz = norm::make_normaliser(text);
    std::vector<double> p(z.size()), grad_z(z.size()), grad_tau(rows);
    nz->forward(z.data(), p.data(), rows, n);
    nz->backward(z.data(), p.data(), v.data(), grad_z.data(), grad_tau.data(), rows, n);
    std::vector<double> x = z;
    auto loss_z = [&] { return test::dot(v, forward(text, x, rows)); };
    EXPECT_TRUE(test::agrees_with_finite_differences(grad_z, x, loss_z, 1e-6, "grad_z"));
    std::vector<double> t{tau};
    auto loss_tau = [&] {
      std::vector<double> q(z.size());
      TauSoftmax(Spec{kName, {{"tau", t[0]}}}).forward(z.data(), q.data(), rows, n);
      return test::dot(v, q);
    };
    const double analytic = grad_tau[0] + grad_tau[1] + grad_tau[2];
    EXPECT_TRUE(test::agrees_with_finite_differences({analytic}, t, loss_tau, 1e-6, "grad_tau"));
  }
}

// The max-retrieval trainer learns τ (tensor head.norm.tau) like ssmax's s; at a fixed τ = 1 it
// trains softmax's model bit for bit; the streaming evaluator takes it by its temperature.
TEST(RegistryPlugin, TrainedAndEvaluatedInMaxRetrieval) {
  max_retrieval::Trainer learned(retrieval_config(spec(":tau=learn")), 1, 2, 2);
  const std::size_t t_offset = learned.layout().params.find("head.norm.tau").offset;
  EXPECT_EQ(learned.params()[t_offset], 0.0f);
  for (int s = 0; s < 8; ++s) ASSERT_TRUE(std::isfinite(learned.step().loss));
  const double t = learned.params()[t_offset];
  EXPECT_NE(t, 0.0) << "τ did not move";
  EXPECT_GT(learned.evaluate(5, 16, 12).samples, 0);   // (binds the learned τ)
  EXPECT_EQ(learned.normaliser().spec().name, kName);
  EXPECT_EQ(learned.normaliser().spec().param("tau"), std::exp(t));

  max_retrieval::Trainer fixed(retrieval_config(spec()), 1, 2, 2), softmax(retrieval_config("softmax"), 1, 2, 2);
  for (int s = 0; s < 3; ++s) {
    fixed.step();
    softmax.step();
  }
  EXPECT_TRUE(same_bits(fixed.params(), softmax.params()));

  const max_retrieval::StreamingEvaluator eval(learned.layout(), learned.params().data(),
                                               {norm::parse_spec(spec(":tau=0.5")), norm::parse_spec("softmax:beta=2")},
                                               32);
  for (std::uint64_t key = 0; key < 4; ++key) {
    const max_retrieval::SampleResult r = eval.evaluate(key, 100, 8);
    ASSERT_EQ(r.outcomes.size(), 2u);
    EXPECT_EQ(r.outcomes[0].logits, r.outcomes[1].logits);
    EXPECT_EQ(r.outcomes[0].map, r.outcomes[1].map);
    EXPECT_EQ(r.outcomes[0].beta, 2.0);
    EXPECT_EQ(r.outcomes[0].entropy, r.outcomes[1].entropy);
  }
}

// The transformer trained on CLRS-Text samples (as sharp-train-text) learns τ per head
// (layers.L.norm.tau); at a fixed τ it trains softmax's model bit for bit; teacher-forced scoring
// evaluates it.
TEST(RegistryPlugin, TrainedAsATextTransformer) {
  transformer::Trainer learned(text_config(spec(":tau=learn")), 3, 2);
  const std::size_t t_offset = learned.model().layout().params.find("layers.1.norm.tau").offset;
  EXPECT_EQ(learned.params()[t_offset], 0.0f);
  train_text(learned, 4);
  EXPECT_NE(learned.params()[t_offset], 0.0f) << "τ did not move";
  const text_model::TeacherForcedScore score =
      text_model::teacher_forced_score(learned.model(), learned.params().data(), text_samples(99, 0, 4), 2);
  EXPECT_TRUE(std::isfinite(score.loss));

  transformer::Trainer fixed(text_config(spec(":tau=1")), 3, 2), softmax(text_config("softmax"), 3, 2);
  train_text(fixed, 2);
  train_text(softmax, 2);
  EXPECT_TRUE(same_bits(fixed.params(), softmax.params()));
}

// The forward pass: blockwise at inference (no cache), query tiles with a cache; the plugin gives
// softmax:beta=2's logits in both, and the two paths agree with each other.
TEST(RegistryPlugin, RunsInTheTransformer) {
  transformer::TransformerConfig plugin = text_config(spec(":tau=0.5")).model, softmax = plugin;
  softmax.normaliser = "softmax:beta=2";
  const transformer::Transformer a(plugin), b(softmax);
  std::vector<double> params(a.parameter_count());
  transformer::init_parameters(a.layout(), params.data(), 17);
  const std::size_t length = 40, V = plugin.vocab;
  std::vector<std::int32_t> tokens(2 * length);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = std::int32_t((i * 7 + 3) % V);
  std::vector<double> blockwise_a(2 * length * V), blockwise_b(blockwise_a.size()), tiled_a(blockwise_a.size());
  transformer::transformer_forward(a, params.data(), tokens.data(), 2, length, blockwise_a.data());
  transformer::transformer_forward(b, params.data(), tokens.data(), 2, length, blockwise_b.data());
  transformer::ForwardCache<double> cache;
  transformer::transformer_forward(a, params.data(), tokens.data(), 2, length, tiled_a.data(), &cache);
  EXPECT_TRUE(same_bits(blockwise_a, blockwise_b));
  double worst = 0.0;
  for (std::size_t i = 0; i < tiled_a.size(); ++i) worst = std::max(worst, std::abs(tiled_a[i] - blockwise_a[i]));
  EXPECT_LT(worst, 1e-10);
}

// No other file of the repository names the remedy (the sources, tests, docs, scripts; not build
// trees, .git or result files): nothing outside this file needed to know it.
TEST(RegistryPlugin, NoOtherFileNamesIt) {
  namespace fs = std::filesystem;
  const fs::path self = fs::canonical(__FILE__), root = self.parent_path().parent_path().parent_path();
  ASSERT_TRUE(fs::exists(root / "lib" / "normalisers" / "registry.hpp")) << root;
  std::vector<std::string> naming;
  std::size_t files = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& path = it->path();
    if (it->is_directory()) {
      if (path.filename() == ".git" || fs::exists(path / "CMakeCache.txt")) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || path.extension() == ".h5" || it->file_size() > (std::uintmax_t(16) << 20)) continue;
    if (fs::canonical(path) == self) continue;
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ++files;
    if (text.find(kName) != std::string::npos) naming.push_back(fs::relative(path, root).string());
  }
  EXPECT_GT(files, 300u) << "the walk missed the repository";
  EXPECT_TRUE(naming.empty()) << "files naming '" << kName << "': " << ::testing::PrintToString(naming);
}

}  // namespace
