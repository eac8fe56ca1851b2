"""sharp.normalise and friends against sharp-normalise (the same bits, the same messages), finite
differences (the backward), and their promises on arrays: no copy of a C-contiguous float array,
one copy of any other, the axis, the dtype, threads, the GIL released."""
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import sharp
from conftest import run_binary

# Every normaliser, with parameters away from their defaults where they have some.
SPECS = ["softmax", "softmax:beta=2.5", "softmax:theta=0.3", "adaptive", "ssmax:s=0.43", "topk:k=3",
         "argmax", "sparsemax", "entmax15", "entmax:alpha=1.25", "asentmax:b=0.5:gamma=1",
         "asentmax_query:b=0.5:gamma=1:delta=0.7",
         "stieltjes:q=4"]
# Row lengths through every path of the kernels: one row per SIMD lane (<= 64 entries), row by row,
# and one long row split into blocks across threads (>= 2^16 entries, fewer rows than threads).
LENGTHS = [1, 3, 16, 17, 64, 65, 1000]


def test_every_normaliser_is_covered():
    assert {sharp.parse_spec(s)[0] for s in SPECS} == set(sharp.normaliser_names())


def random_rows(rows, n, seed, masked=True):
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=3.0, size=(rows, n))
    if masked and n > 2:
        z[::3, 1] = -np.inf   # masked entries in every third row
    return z


def as_lines(z):
    return "".join(" ".join(repr(float(v)) for v in row) + "\n" for row in z)


def cli_rows(spec, z_rows, *flags):
    """sharp-normalise's output for the given [rows, n] arrays, one array per input block."""
    text = "".join(as_lines(z) for z in z_rows)
    out = run_binary("sharp-normalise", "--normaliser", spec, *flags, input_text=text).stdout
    return [np.array([float(t) for t in line.split()]) for line in out.splitlines()]


def same_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


@pytest.mark.parametrize("spec", SPECS)
def test_float64_bit_identical_to_the_cli(spec):
    blocks = [random_rows(5, n, seed=n) for n in LENGTHS] + [random_rows(1, 70000, seed=7, masked=False)]
    expected = cli_rows(spec, blocks)
    got = [row for z in blocks for row in sharp.normalise(z, spec)]
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert same_bits(g, e), f"{spec}: row {i} differs from sharp-normalise's"


@pytest.mark.parametrize("spec", ["softmax:beta=2", "adaptive", "entmax15"])
def test_entropy_and_row_beta_bit_identical_to_the_cli(spec):
    blocks = [random_rows(4, n, seed=n + 1) for n in (5, 16, 300)]
    expected = cli_rows(spec, blocks, "--entropy")
    entropy = [h for z in blocks for h in sharp.entropy(sharp.normalise(z, spec))]
    assert same_bits(entropy, [row[0] for row in expected])
    if spec == "adaptive":   # the CLI's second column: the beta of the entropy pass
        beta = [b for z in blocks for b in sharp.row_beta(z, spec)]
        assert same_bits(beta, [row[1] for row in expected])


def test_row_beta_of_each_temperature_rule():
    z = random_rows(3, 8, seed=2)   # row 0 has a masked entry: 7 keys
    assert np.array_equal(sharp.row_beta(z, "softmax:theta=0.5"), [2.0, 2.0, 2.0])
    assert np.allclose(sharp.row_beta(z, "ssmax:s=0.5"), 0.5 * np.log([7, 8, 8]), rtol=1e-15)
    assert (sharp.row_beta(z, "adaptive") >= 1).all()
    with pytest.raises(ValueError, match="normaliser 'sparsemax' has no temperature"):
        sharp.row_beta(z, "sparsemax")


def cli_error(spec, text):
    done = run_binary("sharp-normalise", "--normaliser", spec, input_text=text, check=False)
    assert done.returncode == 2, done.stderr
    prefix = "sharp-normalise: "
    assert done.stderr.startswith(prefix) and done.stderr.endswith("\n")
    return done.stderr[len(prefix):-1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ["bad spec", "bad parameter", "nan", "+inf", "all masked", "span", "zero-length"])
def test_errors_carry_the_cli_message(case, dtype):
    spec = {"bad spec": "sofmax", "bad parameter": "entmax:alpha=3"}.get(case, "softmax")
    z = random_rows(4, 5, seed=3, masked=False)
    if case == "nan":
        z[1, 2] = np.nan
    if case == "+inf":
        z[2, 0] = np.inf
    if case == "all masked":
        z[3, :] = -np.inf
    if case == "span":
        if dtype == np.float32:
            pytest.skip("a float32 row cannot span more than a double")
        z[0, :2] = [1.5e308, -1.5e308]
    if case == "zero-length":
        z = z[:, :0]
    text = as_lines(z) if z.shape[1] else "\n"
    expected = cli_error(spec, text)
    with pytest.raises(sharp.BadInput) as raised:
        sharp.check_rows(z.astype(dtype)) if case == "span" else sharp.normalise(z.astype(dtype), spec)
    assert str(raised.value) == expected
    assert isinstance(raised.value, ValueError)


def test_nan_row_named_as_the_cli_names_it_in_a_batch_of_many():
    z = random_rows(3000, 20, seed=5, masked=False)
    z[2718, 4] = np.nan
    with pytest.raises(ValueError, match=r"^line 2719, column 5: NaN logit \(allowed: finite numbers, "
                                         r"-inf for a masked entry\)$"):
        sharp.normalise(z, "adaptive")


@pytest.mark.parametrize("spec", SPECS)
def test_float32_close_to_float64(spec):
    z = random_rows(50, 37, seed=11)
    p32 = sharp.normalise(z.astype(np.float32), spec)
    p64 = sharp.normalise(z.astype(np.float32).astype(np.float64), spec)
    assert p32.dtype == np.float32 and p32.shape == z.shape
    assert np.allclose(p32, p64, rtol=1e-5, atol=1e-6)


def test_axis_and_layouts():
    z = np.random.default_rng(2).normal(size=(4, 5, 6))
    for axis in (0, 1, 2, -1, -2):
        expected = np.moveaxis(sharp.normalise(np.ascontiguousarray(np.moveaxis(z, axis, -1)), "adaptive"), -1, axis)
        assert same_bits(sharp.normalise(z, "adaptive", axis=axis), expected)
    strided = z[:, ::2, :]
    assert same_bits(sharp.normalise(strided, "softmax"), sharp.normalise(strided.copy(), "softmax"))
    ints = np.arange(12).reshape(3, 4)
    p = sharp.normalise(ints, "softmax")
    assert p.dtype == np.float64 and same_bits(p, sharp.normalise(ints.astype(float), "softmax"))
    assert same_bits(sharp.normalise([[1.0, 2.0]], "softmax"), sharp.normalise(np.array([[1.0, 2.0]]), "softmax"))
    assert sharp.normalise(np.zeros((0, 7)), "softmax").shape == (0, 7)
    with pytest.raises(np.AxisError):
        sharp.normalise(z, "softmax", axis=3)


def peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_contiguous_float_arrays_are_not_copied_others_once():
    size = 8 << 20   # bytes of each array (numpy's buffers are traced by tracemalloc)
    for dtype in (np.float64, np.float32):
        z = np.random.default_rng(1).normal(size=(size // np.dtype(dtype).itemsize // 256, 256)).astype(dtype)
        p = sharp.normalise(z, "softmax")
        # The result only (plus small change): no copy of the input.
        assert peak_bytes(lambda: sharp.normalise(z, "softmax")) < 1.25 * size
        assert peak_bytes(lambda: sharp.normalise_backward(z, p, p, "softmax")) < 1.25 * size
        # Non-contiguous, or along another axis: one copy, then the result.
        wide = np.repeat(z, 2, axis=1)[:, ::2]
        assert 1.9 * size < peak_bytes(lambda: sharp.normalise(wide, "softmax")) < 2.25 * size
        assert 1.9 * size < peak_bytes(lambda: sharp.normalise(z, "softmax", axis=0)) < 2.25 * size
        # A transposed array whose `axis` is contiguous in memory needs no copy either.
        assert peak_bytes(lambda: sharp.normalise(z.T, "softmax", axis=0)) < 1.25 * size
    ints = np.ones((size // 8 // 256, 256), dtype=np.int64)
    assert 1.9 * size < peak_bytes(lambda: sharp.normalise(ints, "softmax")) < 2.25 * size


def finite_difference_check(spec, z, v, h=1e-6):
    p = sharp.normalise(z, spec)
    grad, params = sharp.normalise_backward(z, p, v, spec, parameters=True)
    numeric = np.zeros_like(z)
    for index in np.ndindex(z.shape):
        step = np.zeros_like(z)
        step[index] = h
        numeric[index] = np.sum((sharp.normalise(z + step, spec) - sharp.normalise(z - step, spec)) * v) / (2 * h)
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-7), spec
    name, values = sharp.parse_spec(spec)
    for key, per_row in params.items():
        assert per_row.shape == z.shape[:-1]
        up, down = dict(values), dict(values)
        up[key] += h
        down[key] -= h
        rows = (sharp.normalise(z, sharp.format_spec(name, up)) - sharp.normalise(z, sharp.format_spec(name, down)))
        assert np.allclose(per_row, np.sum(rows * v, axis=-1) / (2 * h), rtol=1e-5, atol=1e-7), (spec, key)


@pytest.mark.parametrize("spec", SPECS)
def test_backward_against_finite_differences(spec):
    rng = np.random.default_rng(4)
    # Distinct logits a step apart, shuffled: the sparse supports and the top k do not change
    # within a finite-difference step.
    z = np.stack([rng.permutation(np.linspace(-2.0, 2.0, 9)) for _ in range(3)]) + rng.normal(scale=0.01, size=(3, 9))
    v = rng.normal(size=z.shape)
    finite_difference_check(spec, z, v)


def test_backward_float32_close_and_shapes_checked():
    z = random_rows(6, 10, seed=8, masked=False)
    v = np.random.default_rng(9).normal(size=z.shape)
    p = sharp.normalise(z, "adaptive")
    g64 = sharp.normalise_backward(z, p, v, "adaptive")
    g32 = sharp.normalise_backward(z.astype(np.float32), p.astype(np.float32), v.astype(np.float32), "adaptive")
    assert g32.dtype == np.float32 and np.allclose(g32, g64, rtol=1e-4, atol=1e-5)
    assert same_bits(sharp.normalise_backward(z.T, p.T, v.T, "adaptive", axis=0), g64.T)
    with pytest.raises(ValueError, match="same shape"):
        sharp.normalise_backward(z, p[:, :5], v, "adaptive")


def test_threads_settable_and_results_independent_of_them():
    z = random_rows(2000, 300, seed=12)
    before = sharp.get_num_threads()
    try:
        sharp.set_num_threads(1)
        assert sharp.get_num_threads() == 1
        one = sharp.normalise(z, "adaptive")
        sharp.set_num_threads(2)
        assert sharp.get_num_threads() == 2
        assert same_bits(sharp.normalise(z, "adaptive"), one)
        with pytest.raises(ValueError, match="threads must be >= 1"):
            sharp.set_num_threads(0)
    finally:
        sharp.set_num_threads(before)


def test_gil_released_around_the_kernels():
    # With a switch interval of an hour, the main thread keeps the GIL until it gives it up itself:
    # the counting thread advances during sharp.normalise only if the kernels release the GIL.
    z = random_rows(400, 4096, seed=13, masked=False)
    counter, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1
            stop.wait(0.0005)   # blocks, so gives the GIL back to the main thread

    saved = sys.getswitchinterval()
    worker = threading.Thread(target=count)
    sys.setswitchinterval(3600)
    try:
        worker.start()
        while counter[0] == 0:
            stop.wait(0.001)
        advanced = 0
        for _ in range(200):
            before = counter[0]
            sharp.normalise(z, "adaptive")
            advanced = counter[0] - before
            if advanced:
                break
        assert advanced > 0, "another Python thread never ran while the kernels did"
    finally:
        stop.set()
        sys.setswitchinterval(saved)
        worker.join()


def numpy_summary(z):
    m = z.max()
    w = np.exp(z - m)
    s = w.sum()
    return m, m + np.log(s), np.log(s) - np.sum((z - m) * w) / s


def test_streaming_statistics():
    z = np.random.default_rng(14).normal(scale=4.0, size=5000)
    whole = sharp.softmax_summary(z)
    m, lse, h = numpy_summary(z)
    assert whole.max == m and whole.count == z.size
    assert np.isclose(whole.log_sum_exp, lse, rtol=1e-13) and np.isclose(whole.entropy, h, rtol=1e-12)
    assert np.isclose(whole.adaptive_beta, sharp.row_beta(z[None, :], "adaptive")[0], rtol=1e-12)
    stream = sharp.SoftmaxStream()
    for start in range(0, z.size, 1024):   # cuts at multiples of the sub-chunk: the same bits
        stream.add(z[start:start + 1024])
    summary = stream.summary()
    assert (summary.log_sum_exp, summary.entropy, summary.count) == (whole.log_sum_exp, whole.entropy, whole.count)
    first, later = sharp.SoftmaxStream(), sharp.SoftmaxStream()
    first.add(z[:2048])
    later.add(z[2048:])
    first.merge(later)
    assert np.isclose(first.entropy(), h, rtol=1e-12) and first.min == z.min() and first.count == z.size
    assert np.allclose(stream.probability(z[:10]), np.exp(z[:10] - lse), rtol=1e-12)
    floats = sharp.SoftmaxStream()
    floats.add(z.astype(np.float32))
    assert np.isclose(floats.entropy(), h, rtol=1e-5)
    with pytest.raises(ArithmeticError):
        sharp.SoftmaxStream().entropy()   # empty: no distribution


def test_dispersion_bounds():
    d = sharp.dispersion
    n, spread, theta = np.array([1, 16, 1024]), 2.0, 0.5
    assert np.allclose(d.bound_upper(n, spread, theta), np.exp(spread / theta) / n, rtol=1e-15)
    assert np.allclose(d.bound_lower(n, spread, theta), np.exp(-spread / theta) / n, rtol=1e-15)
    worst = d.worst_case_alpha_max(n, spread, theta)
    assert np.allclose(worst, 1 / (1 + (n - 1) * np.exp(-spread / theta)), rtol=1e-15)
    threshold = d.smallest_n_below(0.1, spread, theta)
    assert np.isclose(threshold, 1 + 9 * np.exp(4.0))
    smallest = int(d.smallest_integer_n_below(0.1, spread, theta))
    assert d.worst_case_alpha_max(smallest, spread, theta) < 0.1 <= d.worst_case_alpha_max(smallest - 1, spread, theta)
    assert d.bound_upper(16, [0.0, 1.0], 1.0).shape == (2,)
    for bad in (0, -3):
        with pytest.raises(ValueError, match="n must be >= 1"):
            d.bound_upper(bad, 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon must lie in"):
        d.smallest_n_below(1.5, 1.0, 1.0)
