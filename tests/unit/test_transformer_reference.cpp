// The C++ transformer (double) against the independent numpy forward of tests/reference/transformer.py:
// for every positional scheme, causal and encoder, with and without LayerNorm, tied and untied, and
// several normalisers, the logits and every head's row statistics agree to 1e-9 (relative to
// max(1, |reference|)). The reference writes its models (weights as named arrays) and outputs to a
// temporary HDF5 file; the model is loaded through params_from_arrays, as a result file would be.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "h5/h5.hpp"
#include "transformer/model.hpp"
#include "transformer/model_arrays.hpp"

namespace {

using namespace sharp::transformer;

constexpr double kTolerance = 1e-9;

// The reference's output for one case, in a temporary file removed when the test ends.
struct ReferenceFile {
  std::string path;
  explicit ReferenceFile(int which) {
    const std::string p = (std::filesystem::temp_directory_path() /
                           ("sharp-transformer-ref-" + std::to_string(getpid()) + "-" + std::to_string(which) + ".h5"))
                              .string();
    const std::string cmd = std::string(SHARP_PYTHON) + " " + SHARP_SOURCE_DIR +
                            "/tests/reference/transformer.py --case " + std::to_string(which) + " --out " + p;
    if (std::system(cmd.c_str()) == 0) path = p;
  }
  ~ReferenceFile() {
    if (!path.empty()) std::filesystem::remove(path);
  }
};

// Collects every row's statistics into [layers, batch, heads, length] arrays, one slot per row.
class StatsCollector : public AttentionObserver {
 public:
  StatsCollector(std::size_t layers, std::size_t batch, std::size_t heads, std::size_t length)
      : B_(batch), H_(heads), n_(length), stats_(layers * batch * heads * length) {}
  void observe(const AttentionTile<double>& t) override {
    for (std::size_t r = 0; r < t.rows; ++r) {
      AttentionRowStats& slot = stats_[((t.layer * B_ + t.sequence) * H_ + t.head) * n_ + t.first_row + r];
      EXPECT_EQ(slot.keys, 0u) << "row seen twice";
      slot = t.stats[r];
    }
  }
  const std::vector<AttentionRowStats>& stats() const { return stats_; }

 private:
  std::size_t B_, H_, n_;
  std::vector<AttentionRowStats> stats_;
};

void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0.0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) && std::isnan(got[i])) continue;
    const double err = std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i]));
    if (!(err <= worst)) worst = err, at = i;
  }
  EXPECT_LE(worst, kTolerance) << what << ": worst index " << at << " got " << got[at] << " want " << want[at];
}

class TransformerReference : public ::testing::TestWithParam<int> {};

TEST_P(TransformerReference, LogitsAndHeadStatisticsMatchNumpy) {
  const ReferenceFile reference(GetParam());
  ASSERT_FALSE(reference.path.empty()) << "tests/reference/transformer.py failed";
  auto file = sharp::h5::File::open_read(reference.path);
  const std::string name = "case" + std::to_string(GetParam());
  const sharp::h5::Group g = file.root().open_group(name);

  TransformerConfig c;
  c.layers = std::size_t(g.attr_int("layers"));
  c.heads = std::size_t(g.attr_int("heads"));
  c.d_model = std::size_t(g.attr_int("d_model"));
  c.vocab = std::size_t(g.attr_int("vocab"));
  c.causal = g.attr_int("causal") != 0;
  c.positional = parse_positional(g.attr_string("positional"));
  c.layer_norm = g.attr_int("layer_norm") != 0;
  c.tied = g.attr_int("tied") != 0;
  c.init_scale = g.attr_double("init_scale");
  c.max_length = std::size_t(g.attr_int("max_length"));
  c.normaliser = g.attr_string("normaliser");
  SCOPED_TRACE(name + ": " + positional_name(c.positional) + (c.causal ? " causal " : " encoder ") + c.normaliser +
               (c.layer_norm ? " LN" : " no-LN") + (c.tied ? " tied" : " untied"));
  const Transformer model(c);

  std::map<std::string, sharp::ShapedArray> arrays;   // keyed by tensor name, as the result reader gives them
  for (const std::string& child : g.children()) {
    if (child.rfind(kParamPrefix, 0) != 0) continue;
    sharp::ShapedArray a;
    a.data = g.read<double>(child, &a.shape);
    arrays[child.substr(kParamPrefix.size())] = std::move(a);
  }
  const std::vector<double> params = params_from_arrays<double>(model.layout(), arrays);

  std::vector<std::size_t> tshape;
  const std::vector<std::int32_t> tokens = g.read<std::int32_t>("tokens", &tshape);
  const std::size_t B = tshape[0], n = tshape[1];
  std::vector<double> logits(B * n * c.vocab);
  StatsCollector collector(c.layers, B, c.heads, n);
  transformer_forward(model, params.data(), tokens.data(), B, n, logits.data(), nullptr, &collector);
  expect_close(logits, g.read<double>("logits"), "logits");

  auto field = [&](auto member) {
    std::vector<double> v;
    for (const AttentionRowStats& s : collector.stats()) v.push_back(double(s.*member));
    return v;
  };
  expect_close(field(&AttentionRowStats::logit_max), g.read<double>("stats/logit_max"), "logit_max");
  expect_close(field(&AttentionRowStats::logit_min), g.read<double>("stats/logit_min"), "logit_min");
  expect_close(field(&AttentionRowStats::alpha_max), g.read<double>("stats/alpha_max"), "alpha_max");
  expect_close(field(&AttentionRowStats::alpha_min), g.read<double>("stats/alpha_min"), "alpha_min");
  expect_close(field(&AttentionRowStats::entropy), g.read<double>("stats/entropy"), "entropy");
  expect_close(field(&AttentionRowStats::beta), g.read<double>("stats/beta"), "beta");
  expect_close(field(&AttentionRowStats::keys), g.read<double>("stats/keys"), "keys");
  expect_close(field(&AttentionRowStats::support), g.read<double>("stats/support"), "support");

  // The training path (every activation kept, query-tiled attention) computes the same logits.
  ForwardCache<double> cache;
  std::vector<double> again(logits.size());
  transformer_forward(model, params.data(), tokens.data(), B, n, again.data(), &cache);
  expect_close(again, logits, "logits of the training path");
}

INSTANTIATE_TEST_SUITE_P(Cases, TransformerReference, ::testing::Range(0, 10));

}  // namespace
