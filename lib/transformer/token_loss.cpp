#include "transformer/token_loss.hpp"

#include <cmath>
#include <string>

#include "core/errors.hpp"

namespace sharp::transformer {

template <class T>
TokenLoss token_cross_entropy(T* dlogits, const T* logits, const std::int32_t* targets, std::size_t rows,
                              std::size_t vocab, double scale) {
  TokenLoss out;
  for (std::size_t r = 0; r < rows; ++r) {
    const T* z = logits + r * vocab;
    T* dz = dlogits ? dlogits + r * vocab : nullptr;
    const std::int32_t t = targets[r];
    if (t == kIgnoreTarget) {
      if (dz)
        for (std::size_t c = 0; c < vocab; ++c) dz[c] = T(0);
      continue;
    }
    if (t < 0 || std::size_t(t) >= vocab)
      throw BadInput("target " + std::to_string(t) + " of row " + std::to_string(r) + " is outside [-1, " +
                     std::to_string(vocab) + ")");
    double mx = double(z[0]);
    std::size_t arg = 0;
    for (std::size_t c = 0; c < vocab; ++c) {
      if (!std::isfinite(double(z[c])))
        throw NumericError("token cross-entropy: logit " + std::to_string(c) + " of row " + std::to_string(r) +
                           " is not finite");
      if (double(z[c]) > mx) mx = double(z[c]), arg = c;
    }
    double s = 0.0;
    for (std::size_t c = 0; c < vocab; ++c) s += std::exp(double(z[c]) - mx);
    const double lse = mx + std::log(s);
    out.loss_sum += lse - double(z[t]);
    out.count += 1;
    out.correct += arg == std::size_t(t) ? 1 : 0;
    if (dz) {
      for (std::size_t c = 0; c < vocab; ++c) dz[c] = T(scale * std::exp(double(z[c]) - lse));
      dz[t] = T(double(dz[t]) - scale);
    }
  }
  return out;
}

template TokenLoss token_cross_entropy<float>(float*, const float*, const std::int32_t*, std::size_t, std::size_t,
                                              double);
template TokenLoss token_cross_entropy<double>(double*, const double*, const std::int32_t*, std::size_t, std::size_t,
                                               double);

}  // namespace sharp::transformer
