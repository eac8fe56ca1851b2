#include "nn/mlp.hpp"

#include "nn/linear.hpp"
#include "nn/relu.hpp"

namespace sharp::nn {

MlpLayout add_mlp(ParameterLayout& layout, const std::string& prefix, const MlpShape& shape) {
  MlpLayout m{shape, {}, {}};
  for (std::size_t l = 0; l < shape.layers(); ++l) {
    const std::size_t in = shape.layer_in(l), out = shape.layer_out(l);
    const std::string name = prefix + "." + std::to_string(l);
    m.weight.push_back(layout.add(name + ".weight", {out, in}, in));
    m.bias.push_back(layout.add(name + ".bias", {out}, 0));
  }
  return m;
}

template <class T>
void mlp_forward(T* y, const T* x, const MlpLayout& mlp, const T* params, std::size_t rows, MlpCache<T>& cache) {
  const MlpShape& s = mlp.shape;
  cache.hidden.resize(s.hidden);
  for (auto& h : cache.hidden) h.resize(rows * s.width);
  cache.rows = rows;
  const T* input = x;
  for (std::size_t l = 0; l < s.layers(); ++l) {
    T* output = l == s.hidden ? y : cache.hidden[l].data();
    linear_forward(output, input, params + mlp.weight[l], params + mlp.bias[l], rows, s.layer_in(l), s.layer_out(l));
    if (l < s.hidden) relu_forward(output, output, rows * s.width);
    input = output;
  }
}

template <class T>
void mlp_backward(T* dx, T* grads, const T* dy, const T* x, const MlpLayout& mlp, const T* params, std::size_t rows,
                  MlpCache<T>& cache) {
  const MlpShape& s = mlp.shape;
  cache.grad_a.resize(rows * s.width);
  cache.grad_b.resize(rows * s.width);
  // Walk the layers backwards; `upstream` is dL/d(output of layer l).
  const T* upstream = dy;
  T* buffers[2] = {cache.grad_a.data(), cache.grad_b.data()};
  for (std::size_t l = s.layers(); l-- > 0;) {
    const T* input = l == 0 ? x : cache.hidden[l - 1].data();
    T* down = l == 0 ? dx : buffers[l % 2];  // dL/d(input of layer l)
    linear_backward(down, grads + mlp.weight[l], grads + mlp.bias[l], upstream, input, params + mlp.weight[l], rows,
                    s.layer_in(l), s.layer_out(l));
    if (l == 0) break;
    relu_backward(down, down, cache.hidden[l - 1].data(), rows * s.width);
    upstream = down;
  }
}

template void mlp_forward<float>(float*, const float*, const MlpLayout&, const float*, std::size_t, MlpCache<float>&);
template void mlp_forward<double>(double*, const double*, const MlpLayout&, const double*, std::size_t,
                                  MlpCache<double>&);
template void mlp_backward<float>(float*, float*, const float*, const float*, const MlpLayout&, const float*,
                                  std::size_t, MlpCache<float>&);
template void mlp_backward<double>(double*, double*, const double*, const double*, const MlpLayout&, const double*,
                                   std::size_t, MlpCache<double>&);

}  // namespace sharp::nn
