"""Number parameters read as torch 2.13's argument parser reads them, compared with torch: a
``float`` parameter's refusal names its position only when given positionally, an overloaded
function's refusal is its "invalid combination" of the arguments as given (a method's without
self), a ``float[]`` ("tuple of floats") refuses by its first element or names the element it
cannot unpack, a complex number goes into a real tensor refused in torch's words, and a
Scalar (add's alpha, clamp_'s bound) converted checked to the result's type."""
import pytest

import gradkit
from tensor_twins import same_as_torch


def x(m):
    return m.ones(2, 3)


def F(m):
    return m.nn.functional


_INF = float("inf")

_PROGRAMS = {
    # a float parameter of a function of one signature: its position only when positional
    "pdist positional": lambda m: m.pdist(x(m), 1 + 1j),
    "pdist keyword": lambda m: m.pdist(x(m), p=1 + 1j),
    "pdist 0-d tensor": lambda m: m.pdist(x(m), m.tensor(1.0)),
    "pairwise_distance p positional": lambda m: m.pairwise_distance(x(m), x(m), 1 + 1j),
    "pairwise_distance eps positional": lambda m: F(m).pairwise_distance(x(m), x(m), 2.0, 1j),
    "pairwise_distance eps keyword": lambda m: F(m).pairwise_distance(x(m), x(m), eps=1j),
    "pairwise_distance 1-d tensor p": lambda m: F(m).pairwise_distance(x(m), x(m),
                                                                       m.tensor([3.0])),
    "cosine_similarity eps positional": lambda m: m.cosine_similarity(x(m), x(m), 1, 1 + 1j),
    "cosine_similarity eps list": lambda m: m.cosine_similarity(x(m), x(m), eps=[1.0]),
    "nan_to_num posinf positional": lambda m: m.nan_to_num(x(m), 1.0, 1 + 1j),
    "nan_to_num neginf keyword": lambda m: m.nan_to_num(x(m), neginf=1 + 1j),
    "nan_to_num method": lambda m: x(m).nan_to_num(1 + 1j),
    "nan_to_num_ method": lambda m: x(m).nan_to_num_(1.0, 1 + 1j),
    "nan_to_num None": lambda m: x(m).nan_to_num_(None, None),
    # overloaded: the invalid combination of the arguments as given
    "bernoulli_ method": lambda m: x(m).bernoulli_(1 + 1j),
    "bernoulli_ method keyword": lambda m: x(m).bernoulli_(p=1 + 1j),
    "bernoulli_ method str": lambda m: x(m).bernoulli_("a"),
    "bernoulli method": lambda m: x(m).bernoulli(1 + 1j),
    "bernoulli method tensor p": lambda m: x(m).bernoulli(m.tensor([0.5, 0.5, 0.5])),
    "bernoulli generator keyword": lambda m: m.bernoulli(x(m), 1 + 1j, generator=None),
    "quantile method": lambda m: x(m).quantile(1 + 1j, 0),
    "quantile keyword": lambda m: m.quantile(x(m), q=1 + 1j),
    "quantile str": lambda m: m.quantile(x(m), "a"),
    "pinv rcond": lambda m: m.linalg.pinv(x(m), 1 + 1j),
    "pinv atol str": lambda m: m.linalg.pinv(x(m), atol="a"),
    "pinv atol tensor": lambda m: m.linalg.pinv(x(m), atol=m.tensor(0.1)),
    "matrix_rank tol": lambda m: m.linalg.matrix_rank(x(m), 1 + 1j),
    "matrix_rank rtol, hermitian": lambda m: m.linalg.matrix_rank(x(m), rtol=1j,
                                                                  hermitian=False),
    "kaiser_window keyword beta": lambda m: m.kaiser_window(4, True, beta=1 + 1j),
    "kaiser_window with dtype": lambda m: m.kaiser_window(4, True, 1j, dtype=m.float64),
    "kaiser_window beta alone, 0-d": lambda m: m.kaiser_window(4, beta=m.tensor(2.0)),
    "kaiser_window beta alone, 2**63": lambda m: m.kaiser_window(4, beta=2 ** 63),
    "kaiser_window beta alone, dtype": lambda m: m.kaiser_window(4, beta=1.0, dtype=None),
    "normal keywords": lambda m: m.normal(mean=0.0, std=1 + 1j, size=(2,)),
    "normal two numbers": lambda m: m.normal(0.0, 1 + 1j),
    "normal str mean": lambda m: m.normal("a", m.ones(2)),
    "normal complex mean": lambda m: m.normal(1 + 1j, m.ones(2)),
    # float[]: the first element decides the signature, the others are unpacked
    "histogram range complex second": lambda m: m.histogram(x(m), 3, range=(0.0, 1 + 1j)),
    "histogram range None second": lambda m: m.histogram(x(m), 3, range=(0.0, None)),
    "histogram range tensor second": lambda m: m.histogram(x(m), 3, range=(0.0, m.tensor(1.0))),
    "histogram range 2-element tensor": lambda m: m.histogram(x(m), 3, range=(
        0.0, m.tensor([1.0, 2.0]))),
    "histogram range tensor first": lambda m: m.histogram(x(m), 3, range=(m.tensor(0.0), 1.0)),
    "histogram range str first": lambda m: m.histogram(x(m), 3, range=("a", 1.0)),
    "histogram range float": lambda m: m.histogram(x(m), 3, range=1.0),
    "histogram range of 3": lambda m: m.histogram(x(m), 3, range=(0.0, 1.0, 2.0)),
    "histogram range list of bools": lambda m: m.histogram(x(m), 3, range=[True, 1]),
    "interpolate complex in a tuple": lambda m: F(m).interpolate(x(m)[None], scale_factor=(1j,)),
    "interpolate tensor in a tuple": lambda m: F(m).interpolate(x(m)[None], scale_factor=(
        m.tensor(2.0),)),
    "interpolate 1-d tensor": lambda m: F(m).interpolate(x(m)[None], scale_factor=m.tensor([2.])),
    "interpolate str": lambda m: F(m).interpolate(x(m)[None], scale_factor="a"),
    "interpolate None in a tuple": lambda m: F(m).interpolate(x(m)[None], scale_factor=(None,)),
    "interpolate complex, linear": lambda m: F(m).interpolate(x(m)[None], scale_factor=1j,
                                                              mode="linear"),
    "interpolate complex, antialias": lambda m: F(m).interpolate(
        x(m)[None, None], scale_factor=1 + 1j, mode="bilinear", antialias=True),
    "interpolate tensor, bilinear": lambda m: F(m).interpolate(
        x(m)[None, None], scale_factor=m.tensor(2.0), mode="bilinear"),
    "interpolate complex, mode's rank first": lambda m: F(m).interpolate(
        x(m)[None], scale_factor=1 + 1j, mode="bilinear"),
    "interpolate 0-d tensor, area": lambda m: F(m).interpolate(x(m)[None],
                                                               scale_factor=m.tensor(2.0),
                                                               mode="area"),
    "interpolate 0-d tensor, recomputed": lambda m: F(m).interpolate(
        x(m)[None], scale_factor=m.tensor(2.5), recompute_scale_factor=True),
    # a complex number into a real tensor
    "tensor complex float32": lambda m: m.tensor([0.5, 1 + 1j], dtype=m.float32),
    "tensor complex float16": lambda m: m.tensor([1 + 1j], dtype=m.float16),
    "tensor complex int32": lambda m: m.tensor([1, 1 + 1j], dtype=m.int32),
    "tensor complex uint8": lambda m: m.tensor([1 + 1j], dtype=m.uint8),
    "tensor complex bool": lambda m: m.tensor([1 + 1j], dtype=m.bool),
    "new_tensor complex": lambda m: x(m).new_tensor([1 + 1j]),
    "FloatTensor complex": lambda m: m.FloatTensor([1 + 1j]),
    "tensor None float32": lambda m: m.tensor([None], dtype=m.float32),
    "tensor 0-d None float16": lambda m: m.tensor(None, dtype=m.float16),
    "tensor None nested float64": lambda m: m.tensor([[1.0], [None]], dtype=m.float64),
    "tensor None int64": lambda m: m.tensor([1, None], dtype=m.int64),
    "tensor None bool": lambda m: m.tensor([None], dtype=m.bool),
    "tensor object int8": lambda m: m.tensor([object()], dtype=m.int8),
    "tensor dict complex64": lambda m: m.tensor([{}], dtype=m.complex64),
    "tensor str after a number, int64": lambda m: m.tensor([1, "a"], dtype=m.int64),
    "tensor bytes after a number, float32": lambda m: m.tensor([1.0, b"a"], dtype=m.float32),
    "tensor str first, float32": lambda m: m.tensor(["a"], dtype=m.float32),
    "tensor str, float32": lambda m: m.tensor("a", dtype=m.float32),
    "tensor None, no dtype": lambda m: m.tensor([1.0, None]),
    "new_tensor None": lambda m: x(m).new_tensor([None]),
    "as_tensor None": lambda m: m.as_tensor([None], dtype=m.float32),
    # clamp_'s complex bound: read as a double for a floating target
    "clamp_ complex min": lambda m: x(m).clamp_(min=1 + 1j),
    "clamp_ real complex min": lambda m: x(m).clamp_(min=2 + 0j),
    "clamp_ complex max of float64": lambda m: x(m).double().clamp_(0.0, 1 + 1j),
    "clamp_ int64 complex min": lambda m: x(m).long().clamp_(min=1 + 0j),
    "normalize complex eps": lambda m: F(m).normalize(x(m), eps=1 + 1j),
    "normalize p None": lambda m: F(m).normalize(x(m), p=None),
    "normalize node": lambda m: F(m).normalize(x(m).requires_grad_(), eps=1.0).grad_fn
    .next_functions[1][0].next_functions[0][0].name(),
    "gaussian_nll_loss complex eps": lambda m: F(m).gaussian_nll_loss(x(m), x(m), x(m), eps=1j),
    # add's alpha converted, checked, to the result's type
    "add alpha beyond float": lambda m: m.add(x(m), x(m), alpha=1e308),
    "add alpha beyond float, number other": lambda m: m.add(x(m), 2.0, alpha=-1e300),
    "add alpha beyond half": lambda m: m.add(x(m).half(), x(m).half(), alpha=1e6),
    "add alpha beyond complex64": lambda m: m.add(x(m).cfloat(), x(m).cfloat(), alpha=1e308),
    "add alpha float64": lambda m: m.add(x(m).double(), x(m).double(), alpha=1e308),
    "add alpha inf": lambda m: m.add(x(m), x(m), alpha=_INF),
    "add alpha beyond int32": lambda m: m.add(x(m).int(), x(m).int(), alpha=2 ** 40),
    "add alpha beyond int64": lambda m: m.add(x(m).long(), x(m).long(), alpha=2 ** 63),
    "add alpha -1 into uint8": lambda m: m.add(x(m).byte(), x(m).byte(), alpha=-1),
    "add alpha 300 into uint8": lambda m: m.add(x(m).byte(), x(m).byte(), alpha=300),
    "add_ alpha beyond int8": lambda m: x(m).char().add_(x(m).char(), alpha=300),
    "sub alpha beyond int8": lambda m: m.sub(x(m).char(), x(m).char(), alpha=200),
    "rsub alpha beyond float": lambda m: m.rsub(x(m), x(m), alpha=1e308),
    # an int beyond int64: a float parameter reads it as a double, an int one refuses it
    "pdist p 10**40": lambda m: m.pdist(x(m), p=10 ** 40),
    "bernoulli_ p 2**63": lambda m: x(m).bernoulli_(2 ** 63),
    "normal std -2**64": lambda m: m.normal(m.zeros(2), -2 ** 64),
    "polygamma n 2**63": lambda m: m.polygamma(2 ** 63, x(m)),
    # a tensor for a float parameter: torch's kernel parser takes only a 0-d one without grad
    "dropout1d 1-d tensor p": lambda m: F(m).dropout1d(x(m)[None], m.tensor([0.5])),
    "dropout2d tensor p requiring grad": lambda m: F(m).dropout2d(
        x(m)[None, None], m.tensor(0.5, requires_grad=True)),
    "feature_alpha_dropout_ 1-d tensor p": lambda m: F(m).feature_alpha_dropout(
        x(m)[None], m.tensor([0.5]), training=True, inplace=True),
    "alpha_dropout 0-d tensor p": lambda m: F(m).alpha_dropout(x(m), m.tensor(0.0),
                                                               training=True),
    "batch_norm 1-d tensor eps": lambda m: F(m).batch_norm(x(m), None, None, training=True,
                                                           eps=m.tensor([0.5])),
    "multi_margin_loss 1-d tensor margin": lambda m: F(m).multi_margin_loss(
        x(m), m.tensor([0, 1]), margin=m.tensor([1.0])),
    "multi_margin_loss str margin": lambda m: F(m).multi_margin_loss(x(m), m.tensor([0, 1]),
                                                                     margin="a"),
    "std 1-d tensor correction": lambda m: m.std(x(m), correction=m.tensor([1.0])),
    "var str correction, dim": lambda m: m.var(x(m), 0, correction="a"),
    "var method str correction, keepdim": lambda m: x(m).var(0, correction="a", keepdim=True),
    # None: refused by a parameter torch does not declare optional, taken by one it does
    "kaiser_window beta None": lambda m: m.kaiser_window(4, True, None),
    "kaiser_window beta=None alone": lambda m: m.kaiser_window(4, beta=None),
    "normal std None": lambda m: m.normal(0.0, None, (2,)),
    "normal tensor mean, std None": lambda m: m.normal(m.zeros(2), None),
    "bernoulli p=None": lambda m: m.bernoulli(x(m), p=None),
    "bernoulli_ None": lambda m: x(m).bernoulli_(None),
    "quantile None": lambda m: m.quantile(x(m), None),
    "pdist None": lambda m: m.pdist(x(m), None),
    "pairwise_distance eps None": lambda m: F(m).pairwise_distance(x(m), x(m), eps=None),
    "uniform_ from None": lambda m: x(m).uniform_(None, 1.0),
    "geometric_ None": lambda m: x(m).geometric_(None),
    "rrelu lower None": lambda m: F(m).rrelu(x(m), None),
    "huber_loss delta None": lambda m: F(m).huber_loss(x(m), x(m), delta=None),
    "layer_norm eps None": lambda m: F(m).layer_norm(x(m), (3,), eps=None),
    "histc min None": lambda m: m.histc(x(m), 3, None, 1),
    "add alpha None": lambda m: m.add(x(m), x(m), alpha=None),
    "softplus beta None": lambda m: F(m).softplus(x(m), beta=None),
    "nan_to_num all None": lambda m: m.nan_to_num(x(m), None, None, None),
    "pinv atol None": lambda m: m.linalg.pinv(x(m), atol=None),
    "matrix_rank atol None": lambda m: m.linalg.matrix_rank(x(m), atol=None),
    "var correction None": lambda m: m.var(x(m), correction=None),
    "logit eps None": lambda m: m.logit(x(m) / 2, eps=None),
    "rms_norm eps None": lambda m: F(m).rms_norm(x(m), (3,), eps=None),
    # the products' beta and alpha, index_add's alpha: converted checked as well
    "addmm beta beyond float": lambda m: m.addmm(x(m)[:, :2], x(m)[:, :2], x(m)[:, :2],
                                                 beta=1e300),
    "addmm alpha beyond float, beta 0": lambda m: m.addmm(x(m)[:, :2], x(m)[:, :2],
                                                          x(m)[:, :2], beta=0, alpha=1e300),
    "addmm int beta NaN": lambda m: m.addmm(x(m)[:, :2].long(), x(m)[:, :2].long(),
                                            x(m)[:, :2].long(), beta=float("nan")),
    "addmm int64 alpha 2**63": lambda m: m.addmm(x(m)[:, :2].long(), x(m)[:, :2].long(),
                                                 x(m)[:, :2].long(), alpha=2 ** 63),
    "addmm int float beta truncates": lambda m: m.addmm(x(m)[:, :2].long(), x(m)[:, :2].long(),
                                                        x(m)[:, :2].long(), beta=1.5),
    "addmm nothing summed: no check": lambda m: m.addmm(x(m)[:, :2], m.ones(2, 0),
                                                        m.ones(0, 2), alpha=1e300),
    "addmm half alpha: no check": lambda m: m.addmm(x(m)[:, :2].half(), x(m)[:, :2].half(),
                                                    x(m)[:, :2].half(), alpha=1e6),
    "addmv int32 alpha 2**40": lambda m: m.addmv(m.ones(2).int(), x(m)[:, :2].int(),
                                                 m.ones(2).int(), alpha=2 ** 40),
    "baddbmm alpha beyond float": lambda m: m.baddbmm(x(m)[None], x(m)[None], x(m).T[None],
                                                      alpha=1e300),
    "addr beta beyond half": lambda m: m.addr(x(m).half(), m.ones(2).half(), m.ones(3).half(),
                                              beta=1e6),
    "addr alpha -1 into uint8": lambda m: m.addr(x(m).byte(), m.ones(2).byte(),
                                                 m.ones(3).byte(), alpha=-1),
    "index_add alpha beyond float": lambda m: x(m).index_add(0, m.tensor([0]), m.ones(1, 3),
                                                             alpha=1e300),
    "index_add alpha beyond half": lambda m: x(m).half().index_add(
        0, m.tensor([0]), m.ones(1, 3).half(), alpha=1e6),
    # rrelu_ draws only for the non-positive elements (and there refuses an infinite range)
    "rrelu_ positive, upper inf": lambda m: F(m).rrelu(x(m), upper=_INF, training=True,
                                                        inplace=True),
    "rrelu_ NaN, upper inf": lambda m: F(m).rrelu(m.tensor([float("nan")]), upper=_INF,
                                                  training=True, inplace=True),
    "rrelu_ zero, upper inf": lambda m: F(m).rrelu(m.zeros(2), upper=_INF, training=True,
                                                   inplace=True),
    "rrelu_ negative, lower -inf": lambda m: F(m).rrelu(-x(m), lower=-_INF, training=True,
                                                        inplace=True),
    "rrelu_ float64 range beyond double": lambda m: F(m).rrelu(
        -x(m).double(), lower=-1e308, upper=1e308, training=True, inplace=True),
    "rrelu_ function, positive": lambda m: m.rrelu_(x(m), 0.1, _INF, True),
}


@pytest.mark.parametrize("name", list(_PROGRAMS))
def test_number_parameter_read_as_torch(name):
    same_as_torch(_PROGRAMS[name], count_warnings=False)


_OVERFLOWS = {  # a Scalar of an int past uint64 (or below int64): Python's OverflowErrors
    "add alpha float32": lambda m: m.add(x(m), x(m), alpha=10 ** 40),
    "add alpha int32": lambda m: m.add(x(m).int(), x(m).int(), alpha=10 ** 40),
    "renorm maxnorm": lambda m: x(m).renorm(2, 0, 10 ** 40),
    "renorm p below int64": lambda m: x(m).renorm(-2 ** 64, 0, 1.0),
    "rrelu lower": lambda m: F(m).rrelu(x(m), lower=10 ** 40),
    "rrelu_ lower below int64": lambda m: F(m).rrelu(x(m), lower=-2 ** 64, inplace=True),
}


@pytest.mark.parametrize("name", list(_OVERFLOWS))
def test_scalar_of_an_int_beyond_uint64_is_refused_as_torch(name):
    torch = pytest.importorskip("torch")
    messages = set()
    for m in (gradkit, torch):
        with pytest.raises(OverflowError) as caught:
            _OVERFLOWS[name](m)
        messages.add(str(caught.value))
    assert len(messages) == 1, messages


@pytest.mark.parametrize("loss", ["huber_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32"),
                                    ("float16", "float32")])
@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, True)])
def test_loss_backward_of_mixed_dtypes_as_torch(loss, dtypes, needs):
    """huber's backward kernel reads the operand it differentiates as its input, so its dtype
    error names the target first where only the target requires grad."""
    def program(m):
        input, target = (m.tensor([0.5, 2.0, 3.0], dtype=getattr(m, d)).requires_grad_(n)
                         for d, n in zip(dtypes, needs))
        getattr(F(m), loss)(input, target).backward()
        return [v.grad for v in (input, target)]
    same_as_torch(program, count_warnings=False)
