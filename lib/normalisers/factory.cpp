#include "core/errors.hpp"
#include "normalisers/factories.hpp"

namespace sharp::norm {

std::unique_ptr<Normaliser> make_normaliser(const Spec& spec) {
  using namespace detail;
  const std::string& n = spec.name;
  if (n == "softmax") return make_softmax(spec);
  if (n == "adaptive") return make_adaptive(spec);
  if (n == "ssmax") return make_ssmax(spec);
  if (n == "topk" || n == "argmax") return make_topk(spec);
  if (n == "sparsemax") return make_sparsemax(spec);
  if (n == "entmax15") return make_entmax15(spec);
  if (n == "entmax") return make_entmax(spec);
  if (n == "asentmax") return make_asentmax(spec);
  if (n == "stieltjes") return make_stieltjes(spec);
  throw BadInput("unknown normaliser '" + n + "'");
}

std::unique_ptr<Normaliser> make_normaliser(std::string_view spec_text) {
  return make_normaliser(parse_spec(spec_text));
}

}  // namespace sharp::norm
