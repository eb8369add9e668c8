"""torch's error inputs (the misuses its OpInfo table says must raise) refused by gradkit alike.

The scan (`python tests/fuzz/opinfo_scan.py --errors`) covers every op; here the ops whose
refusals were fixed run every error input torch's table has for them, and one program per
family compares gradkit's error (type and message) with torch's own."""
import itertools

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")

import gradkit  # noqa: E402
from fuzz.opinfo_samples import compare_error, op_db  # noqa: E402

POOLS = tuple(f"nn.functional.{kind}_pool{d}d" for kind in ("max", "avg", "adaptive_max",
                                                             "adaptive_avg") for d in (1, 2, 3))
WINDOWS = tuple(f"signal.windows.{name}" for name in (
    "bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
    "general_hamming", "hamming", "hann", "kaiser", "nuttall"))
CHECKS = ("native_layer_norm", "nn.functional.rms_norm", "nn.functional.embedding",
          "nn.functional.gelu", "nn.functional.l1_loss", "nn.functional.soft_margin_loss",
          "narrow_copy", "hsplit", "vsplit", "dsplit", "scatter", "scatter_add", "scatter_reduce",
          "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d",
          "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
          "nn.functional.conv_transpose3d")
FIXED = POOLS + WINDOWS + CHECKS


@pytest.mark.parametrize("opinfo", [o for o in op_db
                                    if o.name in FIXED and o.error_inputs_func is not None],
                         ids=lambda o: f"{o.name}.{o.variant_test_name}")
def test_torch_error_inputs_of_fixed_ops_are_refused_alike(opinfo):
    differing = [f"#{k}: {found}" for k, error_input in enumerate(opinfo.error_inputs("cpu"))
                 if (found := compare_error(opinfo, error_input))]
    assert not differing, differing


def _error(program, lib):
    """(type name, message) of what ``program(lib)`` raises, gradkit's dtypes named as
    torch's; "ok" when it computes."""
    try:
        program(lib)
    except Exception as e:  # noqa: BLE001 - compared with the other library's
        return type(e).__name__, str(e).replace("gradkit.", "torch.")
    return "ok"


def same_error(program):
    """gradkit raises what torch raises for ``program``; returns gradkit's error."""
    expected = _error(program, torch)
    assert expected != "ok", "torch computes: not an error program"
    assert _error(program, gradkit) == expected
    return expected


@pytest.mark.parametrize("name,d", [("max_pool1d", 1), ("avg_pool1d", 1), ("max_pool2d", 2),
                                    ("avg_pool2d", 2), ("max_pool3d", 3), ("avg_pool3d", 3)])
def test_pooling_argument_checks_in_torchs_order(name, d):
    """Every refused combination of kernel, stride, pad, dilation and an empty or misranked
    input raises torch's first error (torch checks the output size's arguments dim by dim
    before the kernel, the input's emptiness after the dilation)."""
    shapes = [(2,) + (5,) * d, (0, 1) + (5,) * d, (1, 1, 0) + (5,) * (d - 1), (0,) + (5,) * d,
              (5,) * d]
    for shape, k, s, p, dl, indices in itertools.product(
            shapes, (0, -1, 3), (None, 0, -1, 2), (-1, 0, 2), (0, 1, 2), (False, True)):
        kwargs = {"kernel_size": k, "padding": p} | ({} if s is None else {"stride": s})
        if name.startswith("max"):
            kwargs |= {"dilation": dl, "return_indices": indices}
        elif dl != 1 or indices:
            continue

        def program(lib, shape=shape, kwargs=kwargs):
            return getattr(lib.nn.functional, name)(lib.ones(shape), **kwargs)
        if _error(program, torch) != "ok":
            same_error(program)


def test_pooling_refusals_name_torchs_check():
    f = gradkit.nn.functional
    with pytest.raises(RuntimeError, match="^pad must be non-negative, but got pad: -1$"):
        f.max_pool2d(gradkit.ones(0, 1, 49), 2, 50, -1, return_indices=True)
    with pytest.raises(RuntimeError, match=r"^pad should be at most half of effective kernel "
                                           r"size, but got pad=3, kernel_size=3 and dilation=2$"):
        f.max_pool1d(gradkit.ones(0, 1, 49), 3, 1, 3, 2, return_indices=True)
    with pytest.raises(RuntimeError, match=r"^max_pool1d\(\) dilation must be greater than zero, "
                                           r"but got 0$"):
        f.max_pool1d(gradkit.ones(3, 3, 3, requires_grad=True), 1, 1, 0, 0)
    with pytest.raises(RuntimeError, match=r"^max_pool3d_with_indices_out_cpu_template\(\): "
                                           r"Expected input's non-batch dimensions to have "
                                           r"positive length"):
        f.max_pool3d(gradkit.ones(0, 1, 2, 10), 1)


@pytest.mark.parametrize("name", ["hann", "blackman", "kaiser", "exponential"])
def test_windows_take_strided_layout_and_refuse_others(name):
    def window(lib, layout, dtype=None):
        return getattr(lib.signal.windows, name)(5, layout=layout, dtype=dtype)
    assert window(gradkit, gradkit.strided).tolist() == pytest.approx(
        window(torch, torch.strided).tolist())
    checker = "general_cosine" if name == "hann" else name  # hann checks in general_cosine
    with pytest.raises(ValueError, match=f"^{checker} is implemented for strided tensors only, "
                                         "got: torch.sparse_coo$"):
        window(gradkit, torch.sparse_coo)  # a layout gradkit has not: torch's own object
    assert same_error(lambda lib: window(lib, lib.strided, lib.int64))[0] == "ValueError"


def test_normalized_shape_checked_first_as_torch_checks_it():
    x = gradkit.ones(1, 2, 3)
    for f in (gradkit.nn.functional.layer_norm, gradkit.nn.functional.rms_norm):
        with pytest.raises(RuntimeError, match=r"^Expected normalized_shape to be at least "
                                               r"1-dimensional, i\.e\., containing at least one "
                                               r"element, but got normalized_shape = \[\]$"):
            f(x, ())
    # the weight's shape is checked before the input's, in both
    same_error(lambda lib: lib.nn.functional.layer_norm(lib.ones(1, 2, 3), (4,), lib.ones(5)))
    same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(1, 2, 3), (4,), lib.ones(5)))
    same_error(lambda lib: lib.native_layer_norm(lib.ones(1, 2, 3), (), None, None, 1e-5))


@pytest.mark.parametrize("weight_shape", [(), (3,), (1, 1, 1)])
def test_embedding_refuses_a_weight_not_2d(weight_shape):
    indices = gradkit.zeros(2, 2, dtype=gradkit.int64)
    with pytest.raises(RuntimeError, match="^'weight' must be 2-D$"):
        gradkit.nn.functional.embedding(indices, gradkit.ones(weight_shape))
    same_error(lambda lib: lib.nn.functional.embedding(lib.zeros(2, 2, dtype=lib.int64),
                                                       lib.ones(weight_shape)))


def test_gelu_checks_approximate_when_called():
    layer = gradkit.nn.GELU("asdf")  # torch's module accepts it until called
    with pytest.raises(RuntimeError, match=r"^approximate argument must be either none or "
                                           r"tanh\.$"):
        layer(gradkit.ones(2))
    same_error(lambda lib: lib.nn.functional.gelu(lib.ones(2), approximate="asdf"))
    same_error(lambda lib: lib.nn.functional.gelu(lib.ones(2), approximate=None))


@pytest.mark.parametrize("loss", ["l1_loss", "soft_margin_loss", "mse_loss", "smooth_l1_loss"])
def test_losses_refuse_shapes_that_do_not_broadcast_with_torchs_error(loss):
    def program(lib):
        return getattr(lib.nn.functional, loss)(lib.ones(5, 4), lib.ones(5))
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(4\) must match the size of "
                                           r"tensor b \(5\) at non-singleton dimension 1$"):
        program(gradkit)
    same_error(program)


def test_broadcast_tensors_refuses_with_torchs_error():
    same_error(lambda lib: lib.broadcast_tensors(lib.ones(5, 4), lib.ones(5)))
    same_error(lambda lib: lib.broadcast_tensors(lib.ones(3, 1), lib.ones(2), lib.ones(4, 1)))


@pytest.mark.parametrize("name", ["adaptive_avg_pool1d", "adaptive_max_pool1d",
                                  "adaptive_avg_pool2d", "adaptive_max_pool2d",
                                  "adaptive_avg_pool3d", "adaptive_max_pool3d"])
def test_adaptive_pooling_refuses_negative_output_sizes_as_torch(name):
    d = int(name[-2])
    for batch in ((), (1,)):
        for size in ((-1, 0, 2), (-3, 2, -1)):
            def program(lib, shape=batch + (1,) * (d + 1), size=size[:d]):
                return getattr(lib.nn.functional, name)(lib.ones(shape), size)
            same_error(program)
    with pytest.raises(RuntimeError, match=r"^adaptive_avg_pool3d: elements of output_size must "
                                           r"be greater than or equal to 0 but received "
                                           r"\{-1, 0,2\}$"):
        gradkit.nn.functional.adaptive_avg_pool3d(gradkit.ones(1, 1, 1, 1), (-1, 0, 2))


def test_one_dim_poolings_check_each_argument_holds_one_int():
    with pytest.raises(RuntimeError, match=r"^adaptive_max_pool1d\(\) argument 'output_size' "
                                           r"should contain one int \(got 0\)$"):
        gradkit.nn.functional.adaptive_max_pool1d(gradkit.ones(1, 2, 3), ())
    for kwargs in ({"kernel_size": (2, 2)}, {"kernel_size": 2, "stride": (1, 1)},
                   {"kernel_size": 2, "padding": (1, 1)}):
        same_error(lambda lib, kwargs=kwargs: lib.nn.functional.avg_pool1d(lib.ones(1, 2, 3),
                                                                           **kwargs))
    same_error(lambda lib: lib.nn.functional.adaptive_avg_pool1d(lib.ones(1, 2, 3), (2, 2)))


def test_narrow_copy_refuses_as_its_kernel_does():
    with pytest.raises(RuntimeError, match=r"^start \(0\) \+ length \(-1\) exceeds dimension "
                                           r"size \(10\)\.$"):
        gradkit.narrow_copy(gradkit.ones(10), 0, 0, -1)
    same_error(lambda lib: lib.narrow_copy(lib.ones(10, 5, 20), 3, 0, 0))  # its bare check
    same_error(lambda lib: lib.narrow_copy(lib.ones(10), 0, -3, -1))
    same_error(lambda lib: lib.narrow_copy(lib.ones(10), 0, 11, -1))


@pytest.mark.parametrize("name", ["hsplit", "vsplit", "dsplit"])
def test_numpy_style_splits_refuse_what_is_not_ints(name):
    with pytest.raises(TypeError, match=rf"^{name}\(\) received an invalid combination of "
                                        r"arguments - got \(Tensor, str\)"):
        getattr(gradkit, name)(gradkit.ones(4, 4, 4), "abc")
    assert [tuple(p.shape) for p in getattr(gradkit, name)(gradkit.ones(4, 4, 4), [1, 3])] == [
        tuple(p.shape) for p in getattr(torch, name)(torch.ones(4, 4, 4), [1, 3])]


@pytest.mark.parametrize("program", [
    lambda lib: lib.ones(3, 5).scatter(0, lib.tensor([[34, 1], [1, 2]]), lib.ones(2, 5, 2)),
    lambda lib: lib.ones(3, 5).scatter_add(0, lib.zeros(2, 2, dtype=lib.int64), lib.ones(())),
    lambda lib: lib.ones(3).scatter(0, lib.zeros((), dtype=lib.int64), lib.ones(1, 1)),
    lambda lib: lib.ones(3, 5).scatter(0, lib.zeros(2, 2, dtype=lib.int64), lib.ones(3)),
    lambda lib: lib.ones(3, 5).scatter_reduce(0, lib.zeros(2, 2, dtype=lib.int64),
                                              lib.ones(2, 5, 2), "sum"),
    lambda lib: lib.ones(3, 5).scatter(1, lib.zeros(2, 3, dtype=lib.int64), lib.ones(2, 2)),
])
def test_scatter_checks_src_as_torch_in_its_order(program):
    """src's sizes are read (an IndexError past its dims), then its rank against index's,
    before index's bounds."""
    same_error(program)
    with pytest.raises(RuntimeError, match="^Index tensor must have the same number of "
                                           "dimensions as src tensor$"):
        gradkit.ones(3).scatter(0, gradkit.zeros((), dtype=gradkit.int64), gradkit.ones(1, 1))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_convolution_argument_checks_in_torchs_order(d):
    """A weight of the wrong rank, non-positive groups or strides, negative or 'same' padding,
    arguments of the wrong length: torch's first error (its arguments expanded to the
    weight's dims, then checked; 'same' padding's own path checks the rank first)."""
    for weight_ndim, padding, stride, groups in itertools.product(
            (2, 3, 4, 5), (-1, "same", "valid", 0, (1,), (1, 1)), (0, 1, 2, (1, 1)), (0, 1)):
        def program(lib, weight_ndim=weight_ndim, padding=padding, stride=stride, groups=groups):
            conv = getattr(lib.nn.functional, f"conv{d}d")
            return conv(lib.ones((1, 2) + (5,) * d), lib.ones((2,) * weight_ndim), None, stride,
                        padding, 1, groups)
        if _error(program, torch) != "ok":
            same_error(program)


def test_negative_padding_is_refused_before_the_channels():
    with pytest.raises(RuntimeError, match="^negative padding is not supported$"):
        gradkit.nn.functional.conv1d(gradkit.ones(1, 1, 4), gradkit.ones(1, 2, 2), padding=(-1,))


def test_an_error_input_torch_itself_accepts_is_no_finding():
    """torch's table lists clamp_min(tensor, 2) as a misuse, but torch 2.13 computes it:
    gradkit computing it too is no difference; a misuse torch refuses still is one."""
    opinfo = next(o for o in op_db if o.name == "clamp_min")
    accepted = next(iter(opinfo.error_inputs("cpu")))
    assert _error(lambda lib: lib.clamp_min(lib.tensor([1, 2, 3]), 2), torch) == "ok"
    assert compare_error(opinfo, accepted) is None
    opinfo = next(o for o in op_db if o.name == "nn.functional.embedding")
    refused = next(iter(opinfo.error_inputs("cpu")))
    refused.error_type = KeyError  # gradkit raises torch's RuntimeError, not this
    assert "error type" in compare_error(opinfo, refused)
