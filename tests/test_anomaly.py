"""Anomaly mode: NaN hunts as stories, checked against closed forms and PyTorch's messages."""
import gc
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest
import strict_xp

import gradkit
from gradkit.autograd import observers
from gradkit.autograd.anomaly_mode import _observer

AD = gradkit.autograd
NO_INFO = "No forward pass information available"


def _line_of(marker: str) -> str:
    """The text of this file's line that holds ``marker`` (the user's forward line)."""
    with open(__file__) as f:
        return next(line.strip() for line in f if marker in line and "_line_of" not in line)


def _backward_error(loss, **kwargs):
    with pytest.warns(UserWarning, match="Error detected in") as record:
        with pytest.raises(Exception) as info:
            loss.backward(**kwargs)
    warning = "\n".join(str(w.message) for w in record if "Error detected" in str(w.message))
    return info.value, warning


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    AD.set_detect_anomaly(False)
    assert _observer not in observers.active


# -- the classic NaNs ------------------------------------------------------------------

def test_sqrt_of_zero_times_zero_names_node_and_forward_line():
    x = gradkit.zeros(3, requires_grad=True)
    with AD.detect_anomaly():
        y = x.sqrt()  # FORWARD-SQRT
        loss = (y * 0).sum()
        err, warning = _backward_error(loss)
    assert isinstance(err, RuntimeError)
    assert str(err) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    report = err.anomaly
    assert report.kind == "backward_nan" and report.node_name == "SqrtBackward0"
    assert report.op_name == "gradkit::sqrt" and report.output_index == 0
    assert report.source.filename == __file__ and report.source.line == _line_of("FORWARD-SQRT")
    assert report.source.function == "test_sqrt_of_zero_times_zero_names_node_and_forward_line"
    assert warning.startswith("Error detected in SqrtBackward0. Traceback of forward call that "
                              "caused the error:\n")
    assert _line_of("FORWARD-SQRT") in warning
    assert report.path == ["SumBackward0", "MulBackward0", "SqrtBackward0"]
    offending = report.outputs[0]
    assert (offending.shape, offending.dtype, offending.nan, offending.inf) == ((3,), "float32",
                                                                                  3, 0)
    assert offending.first_nonfinite == (0,)
    grad_out = next(s for s in report.inputs if s.label == "grad_output 0")
    assert (grad_out.min, grad_out.max, grad_out.nan) == (0.0, 0.0, 0)
    assert x.grad is None  # the error stops backward before any leaf accumulates


def test_same_message_as_torch_on_the_same_program():
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (gradkit, torch):
        x = lib.zeros(3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(), pytest.raises(RuntimeError) as info:
                (x.sqrt() * 0).sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_log_of_negative_backward_blames_the_multiplication_like_torch():
    x = gradkit.tensor([-1.0, 2.0], requires_grad=True)
    w = gradkit.tensor([1.0, 1.0], requires_grad=True)
    with AD.detect_anomaly():
        z = x.log() * w  # FORWARD-LOG
        err, warning = _backward_error(z.sum())
    assert str(err) == "Function 'MulBackward0' returned nan values in its 1th output."
    assert err.anomaly.source.line == _line_of("FORWARD-LOG")
    saved = {s.label: s for s in err.anomaly.inputs}
    assert saved["saved x"].nan == 1  # log(-1) saved for w's gradient
    torch = pytest.importorskip("torch")
    tx = torch.tensor([-1.0, 2.0], requires_grad=True)
    tw = torch.tensor([1.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(), pytest.raises(RuntimeError) as info:
            (tx.log() * tw).sum().backward()
    assert str(info.value) == str(err)


def test_log_of_negative_caught_in_forward_with_check_forward():
    x = gradkit.tensor([-1.0, 4.0], requires_grad=True)
    with AD.detect_anomaly(check_forward=True):
        with pytest.warns(UserWarning, match="Error detected in LogBackward0"):
            with pytest.raises(RuntimeError, match=r"Op 'gradkit::log' returned nan values in "
                               r"its 0th output in the forward pass\.") as info:
                x.log()  # FORWARD-CHECKED-LOG
    report = info.value.anomaly
    assert report.kind == "forward_nonfinite" and report.node_name == "LogBackward0"
    assert report.source.line == _line_of("FORWARD-CHECKED-LOG")
    (given,) = report.inputs
    assert (given.min, given.max, given.nan, given.inf) == (-1.0, 4.0, 0, 0)
    assert report.outputs[0].nan == 1 and report.outputs[0].max == pytest.approx(np.log(4.0))


def test_inf_minus_inf_in_forward_stops_before_backward():
    a = gradkit.tensor([float("inf"), 1.0])
    b = gradkit.tensor([float("inf"), 2.0])
    with AD.detect_anomaly(check_forward=True):
        with pytest.warns(UserWarning, match="Traceback of the forward call"):
            with pytest.raises(RuntimeError, match="Op 'gradkit::sub' returned nan values") as info:
                a - b  # FORWARD-INF-MINUS-INF
    report = info.value.anomaly
    assert report.node_name is None  # no input requires grad: an op without node
    assert report.source.line == _line_of("FORWARD-INF-MINUS-INF")
    assert [s.inf for s in report.inputs] == [1, 1]


def test_check_forward_reports_inf_too_and_is_off_by_default():
    x = gradkit.tensor([0.0, 1.0])
    with AD.detect_anomaly():
        assert np.isinf((1 / x).numpy()).any()  # no check_forward: no error
    with AD.detect_anomaly(check_forward=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="returned inf values in its 0th output"):
            1 / x


# -- custom Functions, hooks, errors ----------------------------------------------------

def _function_module():
    return pytest.importorskip("gradkit.autograd.function",
                               reason="custom Function API not available yet")


def test_zero_over_zero_in_custom_function_backward():
    function = _function_module()

    class RatioOfZeros(function.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 0 / 0

    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    with AD.detect_anomaly(), np.errstate(invalid="ignore", divide="ignore"):
        y = RatioOfZeros.apply(x)  # FORWARD-CUSTOM
        err, warning = _backward_error(y.sum())
    assert str(err) == "Function 'RatioOfZerosBackward' returned nan values in its 0th output."
    assert err.anomaly.node_name == "RatioOfZerosBackward"
    assert err.anomaly.source.line == _line_of("FORWARD-CUSTOM")
    assert _line_of("FORWARD-CUSTOM") in warning


def test_nan_written_into_a_checked_gradient_by_a_custom_backward_is_caught():
    # anomaly mode does not recheck a gradient a built-in node hands on unchanged: the same
    # array object, already found clean. A custom backward may write into it: rechecked.
    function = _function_module()

    class PoisonInPlace(function.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            g.numpy()[0] = np.nan  # writes into the very array MulBackward0 returned (checked)
            return g

    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    with AD.detect_anomaly():
        y = PoisonInPlace.apply(x + 0)  # FORWARD-POISON
        err, warning = _backward_error((y * 3).sum())
    assert str(err) == "Function 'PoisonInPlaceBackward' returned nan values in its 0th output."
    assert _line_of("FORWARD-POISON") in warning


def test_nan_reaching_a_pass_through_node_by_summed_gradients_is_blamed_on_it():
    # AddBackward0 hands its gradient on as is; here that gradient is a fresh sum of two
    # (inf + -inf = nan), never checked before: AddBackward0 reports it, as in torch
    x = gradkit.tensor([1.0], requires_grad=True)
    with AD.detect_anomaly(), np.errstate(invalid="ignore", over="ignore"):
        h = x + 1  # FORWARD-ADD
        loss = (h * 1e308 * 10).sum() + (h * -1e308 * 10).sum()
        err, _ = _backward_error(loss)
    assert str(err) == "Function 'AddBackward0' returned nan values in its 0th output."


def test_exception_in_backward_keeps_its_type_and_gets_the_report():
    function = _function_module()

    class Exploding(function.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("backward exploded")

    x = gradkit.tensor([1.0], requires_grad=True)
    with AD.detect_anomaly():
        y = Exploding.apply(x) * 3  # FORWARD-EXPLODING
        err, warning = _backward_error(y.sum())
    assert type(err) is ValueError and str(err) == "backward exploded"
    assert err.anomaly.kind == "backward_error"
    assert err.anomaly.message == "ValueError: backward exploded"
    assert err.anomaly.node_name == "ExplodingBackward"
    assert warning.startswith("Error detected in ExplodingBackward.")
    assert _line_of("FORWARD-EXPLODING") in warning
    assert any(_line_of("FORWARD-EXPLODING") in note for note in err.__notes__)


def test_nan_from_a_tensor_hook_is_blamed_on_the_hook():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    with AD.detect_anomaly():
        y = x * 2  # FORWARD-HOOKED
        y.register_hook(lambda g: g * float("nan"))
        err, warning = _backward_error(y.sum())
    assert str(err) == ("Hook registered on the gradient of output 0 of 'MulBackward0' returned "
                        "nan values.")
    assert err.anomaly.kind == "hook_nan"
    assert err.anomaly.source.line == _line_of("FORWARD-HOOKED")
    assert next(s for s in err.anomaly.inputs if s.label == "grad_output 0").nan == 2


def test_exception_in_a_leaf_hook_is_reported():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)

    def bad_hook(g):
        raise KeyError("no such gradient")

    x.register_hook(bad_hook)
    with AD.detect_anomaly():
        loss = (x * 2).sum()
        err, warning = _backward_error(loss)
    assert type(err) is KeyError
    assert err.anomaly.node_name == "AccumulateGrad"
    assert err.anomaly.path == ["SumBackward0", "MulBackward0", "AccumulateGrad"]
    assert err.anomaly.inputs[0].label == "leaf" and err.anomaly.inputs[0].shape == (2,)
    assert NO_INFO in warning


def test_node_made_before_anomaly_mode_has_no_forward_information():
    x = gradkit.zeros(2, requires_grad=True)
    loss = (x.sqrt() * 0).sum()
    with AD.detect_anomaly():
        err, warning = _backward_error(loss)
    assert err.anomaly.stack is None and err.anomaly.source is None
    assert warning == ("Error detected in SqrtBackward0. Traceback of forward call that caused "
                       "the error:\n" + NO_INFO + ". Enable detect anomaly during forward pass "
                       "for more information.")


# -- double backward: the chained report ------------------------------------------------

def test_nan_in_double_backward_chains_the_parent_node():
    x = gradkit.tensor([0.0, 1.0], requires_grad=True)
    with AD.detect_anomaly():
        y = (x ** 1.5).sum()  # FORWARD-POW
        (g,) = AD.grad(y, x, create_graph=True)  # FIRST-BACKWARD
        with pytest.warns(UserWarning) as record:
            with pytest.raises(RuntimeError) as info:
                AD.grad((g * 0).sum(), x)
    assert str(info.value) == "Function 'PowBackward0' returned nan values in its 0th output."
    report = info.value.anomaly
    assert report.source.line == _line_of("FIRST-BACKWARD")
    assert [p.node_name for p in report.parents] == ["PowBackward0"]
    assert report.parents[0].stack[-1].line == _line_of("FORWARD-POW")
    texts = [str(w.message) for w in record if issubclass(w.category, UserWarning)]
    assert texts[0].startswith("Error detected in PowBackward0")  # as torch: two warnings
    assert texts[1].startswith("\n\nPrevious calculation was induced by PowBackward0. Traceback "
                               "of forward call that induced the previous calculation:\n")
    text = "".join(texts)
    assert text.index(_line_of("FIRST-BACKWARD")) < text.index(_line_of("FORWARD-POW"))


def test_checkpointed_region_is_recorded_with_its_user_line():
    checkpoint = pytest.importorskip("gradkit.utils.checkpoint",
                                     reason="checkpoint not available yet").checkpoint

    def block(t):
        return t.sqrt()  # FORWARD-CHECKPOINTED

    x = gradkit.zeros(2, requires_grad=True)
    with AD.detect_anomaly():
        loss = (checkpoint(block, x, use_reentrant=False) * 0).sum()
        err, warning = _backward_error(loss)
    assert "SqrtBackward0" in str(err)
    assert _line_of("FORWARD-CHECKPOINTED") in warning


# -- switches ---------------------------------------------------------------------------

def test_check_nan_false_lets_nan_through():
    x = gradkit.zeros(2, requires_grad=True)
    with AD.detect_anomaly(check_nan=False), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert AD.is_anomaly_enabled() and not AD.is_anomaly_check_nan_enabled()
        with np.errstate(all="ignore"):
            (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_set_detect_anomaly_acts_at_once_and_restores_as_context_manager():
    assert not AD.is_anomaly_enabled()
    AD.set_detect_anomaly(True, check_nan=False)
    assert AD.is_anomaly_enabled() and not AD.is_anomaly_check_nan_enabled()
    assert _observer in observers.active
    with AD.set_detect_anomaly(False):
        assert not AD.is_anomaly_enabled()
    assert AD.is_anomaly_enabled() and not AD.is_anomaly_check_nan_enabled()
    AD.set_detect_anomaly(False)
    assert not AD.is_anomaly_enabled() and _observer not in observers.active
    with pytest.raises(TypeError, match="set_detect_anomaly\\(\\) expects a bool, got int"):
        AD.set_detect_anomaly(1)


def test_decorator_forms_and_nesting():
    @AD.detect_anomaly
    def bare():
        return AD.is_anomaly_enabled()

    @AD.detect_anomaly(check_forward=True)
    def configured():
        return AD.is_anomaly_check_forward_enabled()

    assert bare() and configured() and not AD.is_anomaly_enabled()
    with AD.detect_anomaly(check_nan=False):
        with AD.detect_anomaly():
            assert AD.is_anomaly_check_nan_enabled()
        assert not AD.is_anomaly_check_nan_enabled()
    assert not AD.is_anomaly_enabled() and AD.is_anomaly_check_nan_enabled()


def test_mode_is_thread_local():
    seen = []
    with AD.detect_anomaly():
        thread = threading.Thread(target=lambda: seen.append(AD.is_anomaly_enabled()))
        thread.start()
        thread.join()
        x = gradkit.zeros(2, requires_grad=True)
        results = []

        def other_thread():  # anomaly off there: its NaN passes silently
            with np.errstate(all="ignore"):
                (x.sqrt() * 0).sum().backward()
            results.append(np.isnan(x.grad.numpy()).all())

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert seen == [False] and results == [True]


@pytest.mark.parametrize("action", ["ignore", "error"])
def test_filtered_warnings_do_not_lose_the_report(action):
    x = gradkit.zeros(2, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = AD.detect_anomaly()  # as torch, it warns when made (an error under "error")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter(action)
        with mode, pytest.raises(RuntimeError) as info:
            (x.sqrt() * 0).sum().backward()  # FORWARD-FILTERED
    rendered = info.value.anomaly.render()
    assert "SqrtBackward0" in rendered and _line_of("FORWARD-FILTERED") in rendered
    assert f"{__file__}:" in rendered


# -- cheap and harmless -------------------------------------------------------------------

def test_capture_keeps_code_objects_and_offsets_never_frames():
    class Payload:
        pass

    def forward(x):
        payload = Payload()  # a local that a stored frame would keep alive
        ref = weakref.ref(payload)
        return x * 2, ref

    x = gradkit.ones(2, requires_grad=True)
    with AD.detect_anomaly():
        y, ref = forward(x)
    gc.disable()
    try:
        assert ref() is None
    finally:
        gc.enable()
    frames = y.grad_fn.anomaly_trace  # flat (code, lasti, code, lasti, ...)
    codes, offsets = frames[::2], frames[1::2]
    assert all(type(c).__name__ == "code" for c in codes) and all(type(i) is int for i in offsets)
    assert codes[0].co_name == "forward"  # innermost user frame first, gradkit skipped
    assert not any("/gradkit/" in c.co_filename.replace("\\", "/") for c in codes)
    gc.collect()
    assert not gc.is_tracked(frames)  # the GC stops scanning it


def test_no_false_positive_when_a_sum_overflows_to_inf_minus_inf():
    coefficients = np.zeros(16, np.float32)
    coefficients[[0, 8]], coefficients[[1, 9]] = 3e38, -3e38  # pairwise sum: inf + -inf
    x = gradkit.ones(16, requires_grad=True)
    with AD.detect_anomaly(), np.errstate(over="ignore", invalid="ignore"):
        (x * gradkit.from_numpy(coefficients)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), coefficients)


def test_long_clean_training_run_has_no_false_positive():
    rng = np.random.default_rng(0)
    inputs = gradkit.from_numpy(rng.standard_normal((32, 8)).astype(np.float32))
    labels = gradkit.from_numpy(rng.integers(0, 3, (32, 1)))
    w1 = gradkit.from_numpy(rng.standard_normal((8, 16)).astype(np.float32) * 0.3)
    w2 = gradkit.from_numpy(rng.standard_normal((16, 3)).astype(np.float32) * 0.3)
    params = [w1.requires_grad_(), w2.requires_grad_()]
    losses = []
    with AD.detect_anomaly(check_forward=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(200):
            logits = (inputs @ w1).relu() @ w2
            loss = -gradkit.log_softmax(logits, 1).gather(1, labels).mean()
            for p in params:
                p.grad = None
            loss.backward()
            with gradkit.no_grad():
                for p in params:
                    p -= 0.1 * p.grad
            losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_report_render_lists_source_stats_and_path():
    x = gradkit.zeros(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with AD.detect_anomaly(), pytest.raises(RuntimeError) as info:
            (x.sqrt() * 0).sum().backward()  # FORWARD-RENDER
    text = info.value.anomaly.render().splitlines()
    assert text[0] == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert text[1].startswith(f"Source: {__file__}:") and text[1].endswith(
        _line_of("FORWARD-RENDER"))
    assert "Op: gradkit::sqrt / SqrtBackward0" in text
    assert ("  grad_input 0: shape=[2] dtype=float32 min=None max=None nan=2 inf=0 first at [0]"
            in text)
    assert "Path from the loss: SumBackward0 -> MulBackward0 -> SqrtBackward0" in text


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


# -- on the GPU array module (strict CuPy stand-in: no NumPy calls on device arrays) -----

@pytest.mark.parametrize("check_forward", [False, True])
def test_reports_on_device_arrays(monkeypatch, check_forward):
    strict_xp.install(monkeypatch)
    x = gradkit.tensor([0.0, 4.0], device="cuda", requires_grad=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with AD.detect_anomaly(check_forward=check_forward), pytest.raises(RuntimeError) as info:
            y = x.sqrt()  # FORWARD-DEVICE
            (y * 0).sum().backward()
    report = info.value.anomaly
    assert report.node_name == "SqrtBackward0"
    assert report.source.line == _line_of("FORWARD-DEVICE")
    assert (report.outputs[0].nan, report.outputs[0].first_nonfinite) == (1, (0,))
    with AD.detect_anomaly(check_forward=True), pytest.raises(RuntimeError, match="inf values"):
        with np.errstate(all="ignore"):
            1 / gradkit.zeros(2, device="cuda")


def test_warning_points_at_the_users_backward_call():
    x = gradkit.zeros(2, requires_grad=True)
    with AD.detect_anomaly(), np.errstate(all="ignore"):
        loss = (x.sqrt() * 0).sum()
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0") as record:
            with pytest.raises(RuntimeError):
                loss.backward()  # BACKWARD-CALL
    (warning,) = [w for w in record if "Error detected" in str(w.message)]
    assert warning.filename == __file__
    with open(__file__) as f:
        assert f.readlines()[warning.lineno - 1].strip() == _line_of("BACKWARD-CALL")


def test_other_observers_still_see_the_failing_node_exit_and_errors():
    class Recorder(observers.Observer):
        def __init__(self):
            self.exits, self.errors = [], []

        def node_enter(self, node, grads):
            return node.name()

        def node_exit(self, token, node, grads, grad_inputs):
            self.exits.append(token)

        def node_error(self, node, exc):
            self.errors.append((node.name(), type(exc).__name__))

    recorder = Recorder()
    x = gradkit.zeros(2, requires_grad=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with AD.detect_anomaly():  # attached before the recorder: it raises first
            observers.attach(recorder)
            try:
                with pytest.raises(RuntimeError, match="SqrtBackward0"):
                    (x.sqrt() * 0).sum().backward()
                x.register_hook(lambda g: {}["missing"])
                with pytest.raises(KeyError):
                    (x * 2).sum().backward()
            finally:
                observers.detach(recorder)
    assert recorder.exits[:3] == ["SumBackward0", "MulBackward0", "SqrtBackward0"]
    assert recorder.errors == [("AccumulateGrad", "KeyError")]
