// A trained max-retrieval model rebuilt from named arrays (what the result reader returns): every
// tensor of the layout is placed at its offset; a missing, misshapen, integer or non-float32 tensor
// is refused naming the model and the tensor.
#include <cmath>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "max_retrieval/trained_model.hpp"

using namespace sharp;
using namespace sharp::max_retrieval;

namespace {

TrainedModelConfig config() {
  TrainedModelConfig c;
  c.model = {8, 1};
  c.train_normaliser = "softmax";
  c.train_n = 16;
  c.seed = 3;
  return c;
}

// Every tensor of the layout, entry j of tensor t holding t's offset + j (exact in float32).
std::map<std::string, ShapedArray> tensors() {
  std::map<std::string, ShapedArray> out;
  const ModelLayout layout = make_model_layout(config().model);
  for (const nn::TensorInfo& t : layout.params.tensors()) {
    std::vector<double> v(t.size());
    for (std::size_t j = 0; j < v.size(); ++j) v[j] = double(t.offset + j);
    out[t.name] = ShapedArray{t.shape, v};
  }
  out["unrelated"] = ShapedArray{{1}, std::vector<double>{0.5}};
  return out;
}

}  // namespace

TEST(TrainedModel, EveryTensorLandsAtItsOffset) {
  const TrainedModel m = trained_model("f.h5#id", config(), tensors());
  ASSERT_EQ(m.params.size(), m.layout.params.size());
  for (std::size_t i = 0; i < m.params.size(); ++i) EXPECT_EQ(m.params[i], float(i));
  EXPECT_EQ(m.train_n, 16);
  EXPECT_EQ(m.seed, 3);
  EXPECT_EQ(m.train_normaliser, "softmax");
}

TEST(TrainedModel, BadTensorsAreRefusedByName) {
  auto error_of = [](std::map<std::string, ShapedArray> t) {
    try {
      trained_model("f.h5#id", config(), t);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const ModelLayout layout = make_model_layout(config().model);
  const std::string first = layout.params.tensors().front().name;
  auto t = tensors();
  t.erase(first);
  EXPECT_EQ(error_of(t), "model 'f.h5#id' lacks tensor " + first);
  t = tensors();
  t[first].shape.push_back(1);
  EXPECT_EQ(error_of(t), "tensor " + first + " of model 'f.h5#id' has the wrong shape");
  t = tensors();
  t[first].data = std::vector<std::int64_t>(std::get<std::vector<double>>(t[first].data).size(), 0);
  EXPECT_EQ(error_of(t), "tensor " + first + " of model 'f.h5#id' holds integers, not weights");
  t = tensors();
  std::get<std::vector<double>>(t[first].data)[0] = 0.1;  // not a float32 value
  EXPECT_EQ(error_of(t), "tensor " + first + " of model 'f.h5#id' holds a value that is not a finite float32");
}

namespace {

// A model trained with a learned scalar: its raw value is the last tensor, and `trained` binds it.
TEST(TrainedModel, LearnedScalarIsReadAndBound) {
  TrainedModelConfig c = config();
  c.train_normaliser = "asentmax:b=learn:gamma=0.5";
  c.model.normaliser = c.train_normaliser;
  c.model.train_n = 16;
  std::map<std::string, ShapedArray> weights;
  const ModelLayout layout = make_model_layout(c.model);
  for (const nn::TensorInfo& t : layout.params.tensors()) weights[t.name] = ShapedArray{t.shape, std::vector<double>(t.size(), 0.25)};
  weights["head.norm.b"] = ShapedArray{{1}, std::vector<double>{-1.5}};
  const TrainedModel m = trained_model("x.h5#a", c, weights);
  EXPECT_EQ(m.params.back(), -1.5f);
  EXPECT_DOUBLE_EQ(m.trained.params.at("b"), std::log1p(std::exp(-1.5)));   // b = softplus(b')
  EXPECT_DOUBLE_EQ(m.trained.params.at("gamma"), 0.5);
  weights.erase("head.norm.b");
  EXPECT_THROW(trained_model("x.h5#a", c, weights), sharp::BadInput);
}

}  // namespace
