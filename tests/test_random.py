"""Random sampling against torch 2.13: graph nodes, versions, dtypes, errors, generators.

gradkit's streams are not torch's, so values are checked statistically (fixed seeds, wide
bounds) and everything else (node names, zero gradients, messages) against torch itself.
"""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

N = 20000  # samples for the statistical checks: a mean is within ~4 / sqrt(N) of its value

IN_PLACE = [("uniform_", ()), ("uniform_", (-2.0, 3.0)), ("normal_", ()),
            ("normal_", (1.0, 2.0)), ("bernoulli_", ()), ("bernoulli_", (0.3,)),
            ("random_", ()), ("random_", (5,)), ("random_", (-3, 4)), ("exponential_", ()),
            ("exponential_", (2.0,)), ("geometric_", (0.3,)), ("log_normal_", ()),
            ("log_normal_", (0.0, 0.5)), ("cauchy_", ()), ("cauchy_", (1.0, 2.0))]


def _run(lib, fn):
    try:
        return fn(lib)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error).splitlines()[0]


@pytest.mark.parametrize("name,args", IN_PLACE)
def test_in_place_on_a_non_leaf_records_a_zero_gradient_node(name, args):
    def program(lib):
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        y = x * 2
        getattr(y, name)(*args)
        node = y.grad_fn
        y.sum().backward()
        return (node.name(), [type(n).__name__ for n, _ in node.next_functions], y._version,
                x.grad.tolist(), y.dtype == lib.float64, y.requires_grad)
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("name,args", IN_PLACE)
def test_in_place_on_a_leaf_requiring_grad_is_refused(name, args):
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        return _run(lib, lambda lib: getattr(x, name)(*args))
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("name,args", IN_PLACE)
def test_in_place_under_no_grad_writes_the_leaf_and_bumps_its_version(name, args):
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            out = getattr(x, name)(*args)
        return out is x, x._version, x.requires_grad, x.grad_fn is None, x.dtype == lib.float32
    assert program(gradkit) == program(torch)


def _samples(name, args, dtype=gradkit.float64):
    return getattr(gradkit.zeros(N, dtype=dtype), name)(*args).numpy()


@pytest.mark.parametrize("name,args,mean,var", [
    ("uniform_", (), 0.5, 1 / 12), ("uniform_", (-2.0, 3.0), 0.5, 25 / 12),
    ("normal_", (1.0, 2.0), 1.0, 4.0), ("bernoulli_", (0.3,), 0.3, 0.21),
    ("random_", (-3, 4), 0.0, 4.0), ("exponential_", (2.0,), 0.5, 0.25),
    ("geometric_", (0.3,), 1 / 0.3, 0.7 / 0.09),
    ("log_normal_", (0.0, 0.5), math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25))])
def test_in_place_samples_follow_the_distribution(name, args, mean, var):
    values = _samples(name, args)
    assert abs(values.mean() - mean) < 5 * math.sqrt(var / N)
    assert abs(values.var() - var) < 0.1 * var


def test_sample_supports():
    assert set(np.unique(_samples("random_", (-3, 4)))) == set(range(-3, 4))
    assert set(np.unique(_samples("bernoulli_", (0.5,)))) == {0.0, 1.0}
    assert _samples("geometric_", (0.5,)).min() == 1
    uniform = _samples("uniform_", (2.0, 3.0))
    assert uniform.min() >= 2.0 and uniform.max() < 3.0
    default = _samples("random_", (), gradkit.float32)
    assert default.min() >= 0 and default.max() <= 2 ** 24 and default.max() > 2 ** 23
    cauchy = _samples("cauchy_", (1.0, 2.0))
    assert abs(np.median(cauchy) - 1.0) < 0.1  # quartiles at median -+ sigma
    assert abs(np.percentile(cauchy, 75) - 3.0) < 0.2


def test_complex_uniform_and_normal_draw_both_parts():
    values = gradkit.zeros(N, dtype=gradkit.complex128).normal_().numpy()
    assert abs(values.real.std() - math.sqrt(0.5)) < 0.02  # torch: std / sqrt(2) each part
    assert abs(values.imag.std() - math.sqrt(0.5)) < 0.02
    uniform = gradkit.zeros(N, dtype=gradkit.complex64).uniform_().numpy()
    assert abs(uniform.imag.mean() - 0.5) < 0.02 and uniform.dtype == np.complex64


ERRORS = [
    lambda lib: lib.zeros(3).uniform_(2, 1),
    lambda lib: lib.zeros(3, dtype=lib.int64).uniform_(),
    lambda lib: lib.zeros(3, dtype=lib.bool).uniform_(),
    lambda lib: lib.zeros(3).normal_(0, -1),
    lambda lib: lib.zeros(3, dtype=lib.int32).normal_(),
    lambda lib: lib.zeros(3).bernoulli_(1.5),
    lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0.1, 0.2])),
    lambda lib: lib.zeros(2).bernoulli_(lib.tensor([1.3, 0.2])),
    lambda lib: lib.zeros(2).bernoulli_(lib.tensor([1, 0])),
    lambda lib: lib.zeros(2, dtype=lib.complex64).bernoulli_(lib.tensor([0.5, 0.5])),
    lambda lib: lib.zeros(2, dtype=lib.complex64).bernoulli_(),
    lambda lib: lib.zeros(3).random_(5, 2),
    lambda lib: lib.zeros(2, dtype=lib.uint8).random_(0, 300),
    lambda lib: lib.zeros(2, dtype=lib.int8).random_(-200, 3),
    lambda lib: lib.zeros(2, dtype=lib.complex64).random_(),
    lambda lib: lib.zeros(3).exponential_(-1),
    lambda lib: lib.zeros(3).exponential_(0),
    lambda lib: lib.zeros(2, dtype=lib.int32).exponential_(),
    lambda lib: lib.zeros(2, dtype=lib.complex64).exponential_(),
    lambda lib: lib.zeros(3).geometric_(0),
    lambda lib: lib.zeros(3).geometric_(1.5),
    lambda lib: lib.zeros(2, dtype=lib.bool).geometric_(0.5),
    lambda lib: lib.zeros(3).log_normal_(0, -1),
    lambda lib: lib.zeros(2, dtype=lib.int32).log_normal_(),
    lambda lib: lib.zeros(3).cauchy_(0, 0),
    lambda lib: lib.zeros(2, dtype=lib.int32).cauchy_(),
    lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 3),
    lambda lib: lib.multinomial(lib.tensor([-1.0, 2.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, float("nan")]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, float("inf")]), 1),
    lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 0),
    lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.multinomial(lib.tensor(2.0), 2),
    lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
    lambda lib: lib.bernoulli(lib.tensor([1.5])),
    lambda lib: lib.bernoulli(lib.tensor([1, 0])),
    lambda lib: lib.normal(0.0, -1.0, size=(2,)),
    lambda lib: lib.normal(lib.zeros(2), -1.0),
    lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
    lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.0),
    lambda lib: lib.poisson(lib.tensor([-1.0])),
    lambda lib: lib.poisson(lib.tensor([1])),
    lambda lib: lib.Generator().set_state(lib.zeros(3)),
    lambda lib: lib.Generator().set_state(5),
    lambda lib: lib.Generator().manual_seed(2 ** 64),
    lambda lib: lib.Generator().manual_seed(1.5),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(index):
    program = ERRORS[index]
    torch_error, gradkit_error = _run(torch, program), _run(gradkit, program)
    assert isinstance(torch_error, tuple)
    assert gradkit_error == torch_error


def test_error_types_where_messages_differ():
    """torch names its own state layout or argument parser; gradkit keeps the error type."""
    with pytest.raises(RuntimeError, match="RNG state size to be 3"):
        gradkit.Generator().set_state(gradkit.zeros(3, dtype=gradkit.uint8))
    with pytest.raises(TypeError, match="argument 'generator' must be torch.Generator, not int"):
        gradkit.rand(2, generator=5)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        gradkit.normal(0.0, 1.0)
    with pytest.raises(TypeError, match="must be int, not float"):
        gradkit.zeros(2).random_(1.5, 3.5)


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.bernoulli(p), lambda lib, p: lib.normal(p, 1.0),
    lambda lib, p: lib.normal(0.0, p), lambda lib, p: lib.normal(p, p * 2),
    lambda lib, p: lib.normal(p, lib.ones(2, 1, 1, dtype=lib.float64)),
    lambda lib, p: lib.poisson(p), lambda lib, p: lib.zeros(3, dtype=lib.float64).bernoulli_(p),
    lambda lib, p: (p * 1).bernoulli_(p.detach())])
def test_out_of_place_samples_record_zero_gradients(make):
    def program(lib):
        p = lib.full((3,), 0.5, dtype=lib.float64, requires_grad=True)
        out = make(lib, p)
        out.sum().backward()
        return out.grad_fn.name(), tuple(out.shape), out.dtype == lib.float64, p.grad.tolist()
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("make", [
    lambda lib: lib.normal(0.0, 1.0, (2, 3)), lambda lib: lib.normal(0, 1, size=(2,)),
    lambda lib: lib.normal(0.0, 1.0, size=(2, 3), dtype=lib.float64),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.float16), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.normal(0.0, lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.normal(lib.zeros(2, 1), lib.ones(3)),
    lambda lib: lib.bernoulli(lib.tensor([0.5], dtype=lib.float64)),
    lambda lib: lib.bernoulli(lib.zeros(2, 2), 0.3), lambda lib: lib.ones(2, 2).bernoulli(),
    lambda lib: lib.poisson(lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.multinomial(lib.tensor([1.0, 0.0, 2.0]), 3),
    lambda lib: lib.multinomial(lib.tensor([[1.0, 2.0]]), 5, replacement=True),
    lambda lib: lib.ones(2, 4).multinomial(2),
    lambda lib: lib.rand(2, generator=lib.Generator()),
    lambda lib: lib.randn(2, 3, generator=lib.Generator(), dtype=lib.float64),
    lambda lib: lib.randint(0, 3, (4,), generator=lib.Generator()),
    lambda lib: lib.randperm(4, generator=lib.Generator()),
    lambda lib: lib.rand_like(lib.zeros(2, 3), generator=lib.Generator()),
    lambda lib: lib.randn_like(lib.zeros(2, dtype=lib.float64), generator=lib.Generator()),
    lambda lib: lib.randint_like(lib.zeros(3), 5, generator=lib.Generator()),
    lambda lib: lib.zeros(2, dtype=lib.bool).random_(), lambda lib: lib.zeros(2).random_(-3, -1),
    lambda lib: lib.zeros(2, dtype=lib.int32).bernoulli_(0.5),
    lambda lib: lib.zeros(2, dtype=lib.int32).geometric_(0.5),
    lambda lib: lib.zeros(2, dtype=lib.int32).bernoulli_(lib.tensor([0.5, 0.5])),
    lambda lib: lib.zeros(2, dtype=lib.bool).bernoulli_(lib.full((2,), 0.5, dtype=lib.float16))])
def test_shapes_and_dtypes(make):
    def program(lib):
        out = make(lib)
        return tuple(out.shape), str(out.dtype).split(".")[-1], out.requires_grad
    assert program(gradkit) == program(torch)


def test_multinomial_frequencies_and_no_repeats():
    weights = gradkit.tensor([1.0, 2.0, 0.0, 5.0])
    draws = gradkit.multinomial(weights, N, replacement=True).numpy()
    counts = np.bincount(draws, minlength=4) / N
    assert np.allclose(counts, [0.125, 0.25, 0.0, 0.625], atol=0.02)
    rows = gradkit.multinomial(gradkit.ones(500, 6), 6).numpy()
    assert (np.sort(rows, axis=1) == np.arange(6)).all()  # without replacement: a permutation
    firsts = gradkit.multinomial(weights.expand(N, 4), 1).numpy()[:, 0]
    assert np.allclose(np.bincount(firsts, minlength=4) / N, counts, atol=0.03)


def test_normal_and_poisson_statistics():
    mean = gradkit.full((N,), 3.0, dtype=gradkit.float64)
    values = gradkit.normal(mean, gradkit.full((N,), 0.5, dtype=gradkit.float64)).numpy()
    assert abs(values.mean() - 3.0) < 0.02 and abs(values.std() - 0.5) < 0.02
    counts = gradkit.poisson(gradkit.full((N,), 4.0)).numpy()
    assert abs(counts.mean() - 4.0) < 0.1 and abs(counts.var() - 4.0) < 0.3
    assert (counts == np.round(counts)).all()
    bits = gradkit.bernoulli(gradkit.full((N,), 0.25)).numpy()
    assert abs(bits.mean() - 0.25) < 0.02


def test_generator_api_matches_torch():
    def program(lib):
        g = lib.Generator()
        fresh = g.initial_seed()
        same = g.manual_seed(5) is g
        wrapped = lib.Generator().manual_seed(-1).initial_seed()
        state = g.get_state()
        return fresh, same, g.initial_seed(), wrapped, state.dtype == lib.uint8, state.dim(), \
            str(g.device), lib.manual_seed(3) is lib.default_generator, lib.initial_seed()
    assert program(gradkit) == program(torch)


def test_generators_replay_and_stay_independent():
    first = gradkit.rand(5, generator=gradkit.Generator().manual_seed(11))
    g = gradkit.Generator().manual_seed(11)
    gradkit.manual_seed(0)
    gradkit.rand(3)  # the default stream moving does not touch g
    assert gradkit.equal(gradkit.rand(5, generator=g), first)
    state = g.get_state()
    a = gradkit.zeros(4).normal_(generator=g)
    g.set_state(state)
    assert gradkit.equal(gradkit.zeros(4).normal_(generator=g), a)
    assert g.initial_seed() == 11
    saved = gradkit.get_rng_state()
    b = gradkit.multinomial(gradkit.ones(10), 4)
    gradkit.set_rng_state(saved)
    assert gradkit.equal(gradkit.multinomial(gradkit.ones(10), 4), b)
    assert gradkit.seed() == gradkit.initial_seed()


def test_in_place_sampling_into_views_expanded_tensors_and_dual_tensors():
    def program(lib):
        out = []
        x = lib.ones(3, 2, requires_grad=True)
        y = x * 2
        y[0].uniform_()  # a view of a non-leaf: CopySlices, the written row's gradient is 0
        y.sum().backward()
        out.append((y.grad_fn.name().split("::")[-1], x.grad.tolist()))
        out.append(_run(lib, lambda lib: lib.zeros(1).expand(3).normal_()))
        out.append(_run(lib, lambda lib: lib.zeros(3, requires_grad=True).view(3).uniform_()))
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            dual = fwd.make_dual(lib.ones(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64))
            written = (dual * 1).normal_()
            drawn = lib.normal(dual, 1.0)
            out += [fwd.unpack_dual(t).tangent.tolist() for t in (written, drawn)]
        with lib.inference_mode():
            out.append(lib.zeros(3).uniform_().is_inference())
        return out
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("dtype,high", [
    (gradkit.int64, 2 ** 63 - 1), (gradkit.int32, 2 ** 31 - 1), (gradkit.int8, 127),
    (gradkit.uint8, 255), (gradkit.bool, 1), (gradkit.float16, 2 ** 11),
    (gradkit.float64, 2 ** 53)])
def test_random_without_bounds_covers_torchs_default_range(dtype, high):
    """torch: [0, max] for integer dtypes, [0, 2**digits] (exactly representable) for floats."""
    values = gradkit.zeros(N, dtype=dtype).random_().numpy().astype(np.float64)
    assert values.min() >= 0 and values.max() <= high
    assert values.max() > high * 0.99  # the whole range is reached
    assert (values == np.floor(values)).all()


def test_profiler_names_each_sampling_op():
    """Each distribution is its own op in a trace (torch's aten::uniform_, aten::normal, ...)."""
    x = gradkit.ones(3, requires_grad=True)
    with gradkit.profiler.profile() as prof:
        (x * 2).uniform_()
        gradkit.normal(x, 1.0)
        gradkit.zeros(3).log_normal_()
        gradkit.bernoulli(gradkit.full((3,), 0.5))
        gradkit.zeros(3).random_(0, 4)
    # torch 2.13's top-level events of the same program (in-place draws named as torch's)
    assert [e.name for e in prof.events() if e.cpu_parent is None] == [
        "gradkit::mul", "gradkit::uniform_", "gradkit::normal", "gradkit::zeros",
        "gradkit::log_normal_", "gradkit::full", "gradkit::bernoulli", "gradkit::zeros",
        "gradkit::random_"]


@pytest.mark.parametrize("name", ["uniform_", "normal_", "trunc_normal_", "xavier_uniform_",
                                  "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
                                  "orthogonal_"])
def test_nn_init_takes_a_generator_as_torch(name):
    def program(lib):
        init = getattr(lib.nn.init, name)
        first = init(lib.empty(4, 6), generator=lib.Generator().manual_seed(3))
        again = init(lib.empty(4, 6), generator=lib.Generator().manual_seed(3))
        lib.manual_seed(3)
        default = init(lib.empty(4, 6))  # the default generator seeded alike draws the same
        return lib.equal(first, again), tuple(first.shape), lib.equal(first, default)
    assert program(gradkit) == program(torch)
