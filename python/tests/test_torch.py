"""sharp.torch: one autograd Function per normaliser on sharp's kernels, checked with
torch.autograd.gradcheck in float64 (inputs and the continuous parameters). Skipped, with the
reason, where PyTorch is not installed (make test does not need it; Debian python3-torch)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian python3-torch); "
                                            "sharp.torch is tested where it is")
import sharp  # noqa: E402
import sharp.torch as st  # noqa: E402

# Each normaliser with its continuous parameters (the ones its backward differentiates).
CASES = {"softmax": {"beta": 1.7}, "adaptive": {}, "ssmax": {"s": 0.4}, "topk": {}, "argmax": {},
         "sparsemax": {}, "entmax15": {}, "entmax": {"alpha": 1.5},
         "asentmax": {"b": 0.5, "gamma": 1.0, "delta": 0.7},
         "asentmax_query": {"b": 0.4, "gamma": 0.5, "delta": 1.0}, "stieltjes": {"q": 3.0}}
SPEC_EXTRA = {"topk": ":k=3"}


def test_one_function_per_normaliser():
    assert set(st.FUNCTIONS) == set(sharp.normaliser_names()) == set(CASES)
    assert st.Softmax is st.FUNCTIONS["softmax"] and issubclass(st.Entmax15, torch.autograd.Function)


def logits(rows=3, n=7, seed=0):
    # Distinct logits a step apart: sparse supports and the top k stay put under gradcheck's steps.
    g = torch.Generator().manual_seed(seed)
    base = torch.linspace(-2.0, 2.0, n, dtype=torch.float64)
    rows_ = [base[torch.randperm(n, generator=g)] for _ in range(rows)]
    return (torch.stack(rows_) + 0.01 * torch.randn(rows, n, generator=g, dtype=torch.float64)).requires_grad_()


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_float64(name):
    x = logits()
    params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in CASES[name].items()}
    spec = name + SPEC_EXTRA.get(name, "")

    def f(x, *values):
        return st.normalise(x, spec, **dict(zip(params, values)))

    assert torch.autograd.gradcheck(f, (x, *params.values()))


def test_gradcheck_can_fail():
    # A backward that is off by a factor: gradcheck must notice (the check above can fail).
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return st.Softmax.apply(x, "softmax")

        @staticmethod
        def backward(ctx, g):
            return 1.01 * g

    with pytest.raises(RuntimeError):
        torch.autograd.gradcheck(Wrong.apply, (logits(),))


def test_same_values_as_sharp_normalise_and_torch_softmax():
    x = torch.randn(5, 33, dtype=torch.float64)
    for name in CASES:
        spec = sharp.format_spec(*sharp.parse_spec(name + SPEC_EXTRA.get(name, "") + "".join(
            f":{k}={v!r}" for k, v in CASES[name].items())))
        got = st.FUNCTIONS[name].apply(x, spec).numpy()
        assert np.array_equal(got, sharp.normalise(x.numpy(), spec))
    assert torch.allclose(st.Softmax.apply(x, "softmax:beta=2"), torch.softmax(2 * x, dim=-1), rtol=1e-13, atol=1e-15)
    x32 = x.float()[:, ::2]   # non-contiguous float32: copied once, float32 out
    p = st.normalise(x32, "adaptive")
    assert p.dtype == torch.float32 and torch.allclose(p, st.normalise(x32.contiguous(), "adaptive"))


def test_parameter_gradient_sums_rows_and_errors_name_the_problem():
    x = logits(rows=4)
    beta = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    v = torch.randn(4, 7, dtype=torch.float64)
    (st.Softmax.apply(x, "softmax", beta) * v).sum().backward()
    p = sharp.normalise(x.detach().numpy(), "softmax:beta=1.3")
    _, per_row = sharp.normalise_backward(x.detach().numpy(), p, v.numpy(), "softmax:beta=1.3", parameters=True)
    assert beta.grad.item() == pytest.approx(per_row["beta"].sum(), rel=1e-15)
    with pytest.raises(ValueError, match="runs 'softmax', not the spec 'adaptive'"):
        st.Softmax.apply(x, "adaptive")
    with pytest.raises(ValueError, match="no continuous parameter k"):
        st.normalise(x, "topk:k=2", k=3)
