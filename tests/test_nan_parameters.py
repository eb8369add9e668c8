"""Bad number parameters, run in gradkit and in torch 2.13: a NaN (either sign, also as a 0-d
tensor), infinities, -0.0, a huge value, a negative one, a bool and a complex number given for
a float parameter of losses, activations, norms, the dropout family, the in-place samplers,
windows, spaced values, distances and optimizers / lr schedulers. Each call must give torch's
outcome: the same error type and first line of message, or a result in both."""
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")

_VALUES = {
    "nan": lambda m: float("nan"),
    "-nan": lambda m: -float("nan"),
    "tensor -nan": lambda m: m.tensor(-float("nan")),
    "inf": lambda m: float("inf"),
    "-inf": lambda m: -float("inf"),
    "-0.0": lambda m: -0.0,
    "huge": lambda m: 1e308,
    "-1": lambda m: -1.0,
    "True": lambda m: True,
    "complex": lambda m: 1 + 1j,
}


def x(m):
    return m.ones(2, 3, 4)


def F(m):
    return m.nn.functional


def _param(m):
    """A leaf with a gradient, for the optimizers and the gradient clipping."""
    leaf = m.ones(2, requires_grad=True)
    leaf.grad = m.ones(2)
    return leaf


def _sgd(m):
    return m.optim.SGD([_param(m)], lr=0.1)


def _lr(m):
    return m.optim.lr_scheduler


_CALLS = {
    "renorm maxnorm": lambda m, v: m.ones(1, 3).renorm(2, 0, v),
    "renorm p": lambda m, v: m.ones(1, 3).renorm(v, 0, 1.0),
    "kaiser_window beta": lambda m, v: m.kaiser_window(4, True, v),
    "kaiser_window beta alone": lambda m, v: m.kaiser_window(4, beta=v),
    "dropout": lambda m, v: F(m).dropout(x(m), p=v),
    "dropout eval": lambda m, v: F(m).dropout(x(m), p=v, training=False),
    "dropout inplace": lambda m, v: F(m).dropout(x(m), p=v, inplace=True),
    "dropout1d": lambda m, v: F(m).dropout1d(x(m), p=v),
    "dropout2d": lambda m, v: F(m).dropout2d(x(m), p=v),
    "dropout3d": lambda m, v: F(m).dropout3d(x(m), p=v),
    "alpha_dropout": lambda m, v: F(m).alpha_dropout(x(m), p=v, training=True),
    "feature_alpha_dropout": lambda m, v: F(m).feature_alpha_dropout(x(m), p=v, training=True),
    "Dropout": lambda m, v: m.nn.Dropout(v),
    "huber_loss delta": lambda m, v: F(m).huber_loss(x(m), x(m), delta=v),
    "smooth_l1_loss beta": lambda m, v: F(m).smooth_l1_loss(x(m), x(m), beta=v),
    "HuberLoss delta": lambda m, v: m.nn.HuberLoss(delta=v)(x(m), x(m)),
    "rrelu lower": lambda m, v: F(m).rrelu(x(m), lower=v, training=True),
    "rrelu upper": lambda m, v: F(m).rrelu(x(m), upper=v, training=True),
    "rrelu eval lower": lambda m, v: F(m).rrelu(x(m), lower=v, training=False),
    "rrelu inplace lower": lambda m, v: F(m).rrelu(x(m), lower=v, inplace=True),
    "normal std": lambda m, v: m.normal(0.0, v, (2,)),
    "normal mean": lambda m, v: m.normal(v, 1.0, (2,)),
    "normal tensor mean, std": lambda m, v: m.normal(m.zeros(2), v),
    "normal_ std": lambda m, v: m.ones(2).normal_(0, v),
    "normal_ mean": lambda m, v: m.ones(2).normal_(v, 1),
    "init.normal_ std": lambda m, v: m.nn.init.normal_(m.ones(2), 0, v),
    "uniform_ from": lambda m, v: m.ones(2).uniform_(v, 1),
    "uniform_ to": lambda m, v: m.ones(2).uniform_(0, v),
    "cauchy_ sigma": lambda m, v: m.ones(2).cauchy_(0, v),
    "exponential_ lambd": lambda m, v: m.ones(2).exponential_(v),
    "geometric_ p": lambda m, v: m.ones(2).geometric_(v),
    "log_normal_ std": lambda m, v: m.ones(2).log_normal_(0, v),
    "bernoulli_ p": lambda m, v: m.ones(2).bernoulli_(v),
    "bernoulli p": lambda m, v: m.bernoulli(m.ones(2), v),
    "poisson rate": lambda m, v: m.poisson(m.tensor([v])),
    "multinomial weight": lambda m, v: m.multinomial(m.tensor([v, 1.0]), 1),
    "binomial prob": lambda m, v: m.binomial(m.tensor([3.0]), m.tensor([v])),
    "arange end": lambda m, v: m.arange(0, v),
    "arange step": lambda m, v: m.arange(0, 3, v),
    "arange start": lambda m, v: m.arange(v, 3),
    "linspace end": lambda m, v: m.linspace(0, v, 3),
    "logspace base": lambda m, v: m.logspace(0, 1, 3, base=v),
    "full value": lambda m, v: m.full((2,), v),
    "pdist p": lambda m, v: F(m).pdist(x(m)[0], p=v),
    "cdist p": lambda m, v: m.cdist(x(m), x(m), p=v),
    "pairwise_distance p": lambda m, v: F(m).pairwise_distance(x(m), x(m), p=v),
    "pairwise_distance eps": lambda m, v: F(m).pairwise_distance(x(m), x(m), eps=v),
    "cosine_similarity eps": lambda m, v: F(m).cosine_similarity(x(m), x(m), eps=v),
    "interpolate scale_factor": lambda m, v: F(m).interpolate(x(m), scale_factor=v),
    "histc min": lambda m, v: m.histc(x(m), 3, v, 1),
    "histc max": lambda m, v: m.histc(x(m), 3, 0, v),
    "softplus beta": lambda m, v: F(m).softplus(x(m), beta=v),
    "softplus threshold": lambda m, v: F(m).softplus(x(m), threshold=v),
    "elu alpha": lambda m, v: F(m).elu(x(m), alpha=v),
    "celu alpha": lambda m, v: F(m).celu(x(m), alpha=v),
    "leaky_relu slope": lambda m, v: F(m).leaky_relu(x(m), v),
    "hardtanh min": lambda m, v: F(m).hardtanh(x(m), v, 1.0),
    "hardtanh max": lambda m, v: F(m).hardtanh(x(m), -1.0, v),
    "softshrink lambd": lambda m, v: F(m).softshrink(x(m), v),
    "hardshrink lambd": lambda m, v: F(m).hardshrink(x(m), v),
    "threshold": lambda m, v: F(m).threshold(x(m), v, 0.0),
    "clamp min": lambda m, v: m.clamp(x(m), v, 1.0),
    "clamp_min": lambda m, v: m.clamp_min(x(m), v),
    "nan_to_num nan": lambda m, v: m.nan_to_num(x(m), nan=v),
    "pad value": lambda m, v: F(m).pad(x(m), (1, 1), value=v),
    "lp_pool1d norm_type": lambda m, v: F(m).lp_pool1d(x(m), v, 2),
    "normalize p": lambda m, v: F(m).normalize(x(m), p=v),
    "normalize eps": lambda m, v: F(m).normalize(x(m), eps=v),
    "norm p": lambda m, v: m.norm(x(m), p=v),
    "vector_norm ord": lambda m, v: m.linalg.vector_norm(x(m), ord=v),
    "matrix_norm ord": lambda m, v: m.linalg.matrix_norm(x(m), ord=v),
    "dist p": lambda m, v: m.dist(x(m), x(m), p=v),
    "quantile q": lambda m, v: m.quantile(x(m), v),
    "nanquantile q": lambda m, v: m.nanquantile(x(m), v),
    "pinv rtol": lambda m, v: m.linalg.pinv(x(m), rtol=v),
    "matrix_rank atol": lambda m, v: m.linalg.matrix_rank(x(m), atol=v),
    "isclose rtol": lambda m, v: m.isclose(x(m), x(m), rtol=v),
    "isclose atol": lambda m, v: m.isclose(x(m), x(m), atol=v),
    "triplet_margin_loss margin": lambda m, v: F(m).triplet_margin_loss(x(m), x(m), x(m),
                                                                        margin=v),
    "triplet_margin_loss p": lambda m, v: F(m).triplet_margin_loss(x(m), x(m), x(m), p=v),
    "triplet_margin_loss eps": lambda m, v: F(m).triplet_margin_loss(x(m), x(m), x(m), eps=v),
    "margin_ranking_loss margin": lambda m, v: F(m).margin_ranking_loss(x(m), x(m), x(m),
                                                                        margin=v),
    "hinge_embedding_loss margin": lambda m, v: F(m).hinge_embedding_loss(x(m), x(m), margin=v),
    "cosine_embedding_loss margin": lambda m, v: F(m).cosine_embedding_loss(
        x(m)[0], x(m)[0], m.ones(3), margin=v),
    "multi_margin_loss margin": lambda m, v: F(m).multi_margin_loss(
        m.ones(2, 3), m.tensor([0, 1]), margin=v),
    "cross_entropy label_smoothing": lambda m, v: F(m).cross_entropy(
        m.ones(2, 3), m.tensor([0, 1]), label_smoothing=v),
    "gaussian_nll_loss eps": lambda m, v: F(m).gaussian_nll_loss(x(m), x(m), m.ones(2, 3, 4),
                                                                 eps=v),
    "poisson_nll_loss eps": lambda m, v: F(m).poisson_nll_loss(x(m), x(m), eps=v),
    "batch_norm eps": lambda m, v: F(m).batch_norm(x(m), None, None, training=True, eps=v),
    "batch_norm eval eps": lambda m, v: F(m).batch_norm(x(m), m.zeros(3), m.ones(3), eps=v),
    "batch_norm momentum": lambda m, v: F(m).batch_norm(x(m), m.zeros(3), m.ones(3),
                                                        training=True, momentum=v),
    "group_norm eps": lambda m, v: F(m).group_norm(x(m), 1, eps=v),
    "layer_norm eps": lambda m, v: F(m).layer_norm(x(m), (4,), eps=v),
    "rms_norm eps": lambda m, v: F(m).rms_norm(x(m), (4,), eps=v),
    "instance_norm eps": lambda m, v: F(m).instance_norm(x(m), eps=v),
    "local_response_norm alpha": lambda m, v: F(m).local_response_norm(x(m), 2, alpha=v),
    "embedding max_norm": lambda m, v: F(m).embedding(m.tensor([0]), m.ones(2, 2), max_norm=v),
    "embedding norm_type": lambda m, v: F(m).embedding(m.tensor([0]), m.ones(2, 2),
                                                       max_norm=1.0, norm_type=v),
    "gumbel_softmax tau": lambda m, v: F(m).gumbel_softmax(m.ones(2, 3), tau=v),
    "clip_grad_norm_ max_norm": lambda m, v: m.nn.utils.clip_grad_norm_([_param(m)], v),
    "clip_grad_value_ clip_value": lambda m, v: m.nn.utils.clip_grad_value_([_param(m)], v),
    "windows.exponential tau": lambda m, v: m.signal.windows.exponential(4, tau=v),
    "windows.gaussian std": lambda m, v: m.signal.windows.gaussian(4, std=v),
    "windows.kaiser beta": lambda m, v: m.signal.windows.kaiser(4, beta=v),
    "windows.general_cosine a": lambda m, v: m.signal.windows.general_cosine(4, a=[v, 0.5]),
    "windows.general_hamming alpha": lambda m, v: m.signal.windows.general_hamming(4, alpha=v),
    "init.uniform_ a": lambda m, v: m.nn.init.uniform_(m.ones(2), v, 1.0),
    "init.trunc_normal_ std": lambda m, v: m.nn.init.trunc_normal_(m.ones(2), std=v),
    "init.xavier_uniform_ gain": lambda m, v: m.nn.init.xavier_uniform_(m.ones(2, 2), gain=v),
    "init.kaiming_uniform_ a": lambda m, v: m.nn.init.kaiming_uniform_(m.ones(2, 2), a=v),
    "init.orthogonal_ gain": lambda m, v: m.nn.init.orthogonal_(m.ones(2, 2), gain=v),
    "init.sparse_ sparsity": lambda m, v: m.nn.init.sparse_(m.ones(2, 2), v),
    "init.constant_": lambda m, v: m.nn.init.constant_(m.ones(2), v),
    "clip_grad_norm_ norm_type": lambda m, v: m.nn.utils.clip_grad_norm_([_param(m)], 1.0,
                                                                        norm_type=v),
    "lp_pool2d norm_type": lambda m, v: F(m).lp_pool2d(x(m), v, 2),
    "local_response_norm beta": lambda m, v: F(m).local_response_norm(x(m), 2, beta=v),
    "local_response_norm k": lambda m, v: F(m).local_response_norm(x(m), 2, k=v),
    "logit eps": lambda m, v: m.logit(x(m), eps=v),
    "logit eps float16": lambda m, v: m.logit(m.full((2,), 0.5, dtype=m.float16), eps=v),
    "nan_to_num posinf": lambda m, v: m.nan_to_num(x(m), posinf=v),
    "clamp max": lambda m, v: m.clamp(x(m), max=v),
    "threshold value": lambda m, v: F(m).threshold(x(m), 0.5, v),
    "std correction": lambda m, v: m.std(x(m), correction=v),
    "var correction": lambda m, v: m.var(x(m), correction=v),
    "lerp weight": lambda m, v: m.lerp(x(m), x(m), v),
    "add alpha": lambda m, v: m.add(x(m), x(m), alpha=v),
    "addcmul value": lambda m, v: m.addcmul(x(m), x(m), x(m), value=v),
    "histogram range": lambda m, v: m.histogram(x(m), 3, range=(v, 1.0)),
    "elu_ alpha": lambda m, v: F(m).elu(x(m), alpha=v, inplace=True),
    "hardtanh_ max": lambda m, v: F(m).hardtanh(x(m), -1.0, v, inplace=True),
    "rrelu_ upper": lambda m, v: F(m).rrelu(x(m), upper=v, training=True, inplace=True),
    "SGD lr": lambda m, v: m.optim.SGD([_param(m)], lr=v),
    "SGD momentum": lambda m, v: m.optim.SGD([_param(m)], lr=0.1, momentum=v),
    "SGD weight_decay": lambda m, v: m.optim.SGD([_param(m)], lr=0.1, weight_decay=v),
    "Adam lr": lambda m, v: m.optim.Adam([_param(m)], lr=v),
    "Adam eps": lambda m, v: m.optim.Adam([_param(m)], eps=v),
    "Adam betas[0]": lambda m, v: m.optim.Adam([_param(m)], betas=(v, 0.9)),
    "Adam betas[1]": lambda m, v: m.optim.Adam([_param(m)], betas=(0.9, v)),
    "Adam weight_decay": lambda m, v: m.optim.Adam([_param(m)], weight_decay=v),
    "AdamW weight_decay": lambda m, v: m.optim.AdamW([_param(m)], weight_decay=v),
    "Adagrad lr": lambda m, v: m.optim.Adagrad([_param(m)], lr=v),
    "Adagrad lr_decay": lambda m, v: m.optim.Adagrad([_param(m)], lr_decay=v),
    "Adagrad initial_accumulator_value": lambda m, v: m.optim.Adagrad(
        [_param(m)], initial_accumulator_value=v),
    "RMSprop lr": lambda m, v: m.optim.RMSprop([_param(m)], lr=v),
    "RMSprop alpha": lambda m, v: m.optim.RMSprop([_param(m)], alpha=v),
    "RMSprop momentum": lambda m, v: m.optim.RMSprop([_param(m)], momentum=v),
    "Adadelta rho": lambda m, v: m.optim.Adadelta([_param(m)], rho=v),
    "Adadelta eps": lambda m, v: m.optim.Adadelta([_param(m)], eps=v),
    "Adamax eps": lambda m, v: m.optim.Adamax([_param(m)], eps=v),
    "NAdam momentum_decay": lambda m, v: m.optim.NAdam([_param(m)], momentum_decay=v),
    "RAdam betas[0]": lambda m, v: m.optim.RAdam([_param(m)], betas=(v, 0.9)),
    "ASGD lr": lambda m, v: m.optim.ASGD([_param(m)], lr=v),
    "ASGD weight_decay": lambda m, v: m.optim.ASGD([_param(m)], weight_decay=v),
    "Rprop lr": lambda m, v: m.optim.Rprop([_param(m)], lr=v),
    "Rprop etas[0]": lambda m, v: m.optim.Rprop([_param(m)], etas=(v, 1.2)),
    "LBFGS lr": lambda m, v: m.optim.LBFGS([_param(m)], lr=v),
    "StepLR gamma": lambda m, v: _lr(m).StepLR(_sgd(m), 2, gamma=v).get_last_lr(),
    "ExponentialLR gamma": lambda m, v: _lr(m).ExponentialLR(_sgd(m), gamma=v).get_last_lr(),
    "LinearLR start_factor": lambda m, v: _lr(m).LinearLR(_sgd(m), start_factor=v).get_last_lr(),
    "ConstantLR factor": lambda m, v: _lr(m).ConstantLR(_sgd(m), factor=v).get_last_lr(),
    "ReduceLROnPlateau factor": lambda m, v: _lr(m).ReduceLROnPlateau(_sgd(m), factor=v),
    "CosineAnnealingLR eta_min": lambda m, v: _lr(m).CosineAnnealingLR(
        _sgd(m), 3, eta_min=v).get_last_lr(),
    "MultiStepLR gamma": lambda m, v: _lr(m).MultiStepLR(_sgd(m), [1], gamma=v).get_last_lr(),
    "PolynomialLR power": lambda m, v: _lr(m).PolynomialLR(_sgd(m), 4, power=v).get_last_lr(),
    "CyclicLR base_lr": lambda m, v: _lr(m).CyclicLR(_sgd(m), v, 1.0).get_last_lr(),
    "CosineAnnealingWarmRestarts eta_min": lambda m, v: _lr(m).CosineAnnealingWarmRestarts(
        _sgd(m), 2, eta_min=v).get_last_lr(),
    "SWALR swa_lr": lambda m, v: m.optim.swa_utils.SWALR(_sgd(m), v).get_last_lr(),
    "ReduceLROnPlateau threshold": lambda m, v: _lr(m).ReduceLROnPlateau(_sgd(m), threshold=v),
    "ReduceLROnPlateau min_lr": lambda m, v: _lr(m).ReduceLROnPlateau(_sgd(m), min_lr=v),
    "OneCycleLR pct_start": lambda m, v: _lr(m).OneCycleLR(
        _sgd(m), 1.0, total_steps=4, pct_start=v).get_last_lr(),
}

# Calls that still differ from torch, with the reason (strict: a fix makes them fail, so the
# entry is removed with it). Not NaN-like numbers: how a wrong type is refused.
_LEFT: dict = {}


def _outcome(m, call: str, value: str) -> tuple:
    """("ok", shape of a tensor result) or (error type, first line of its message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = _CALLS[call](m, _VALUES[value](m))
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            message = str(error).split("\n")[0].replace("gradkit._tensor.", "gradkit.")
            return type(error).__name__, message.replace("gradkit", "LIB").replace("torch", "LIB")
    return "ok", tuple(getattr(result, "shape", ()))


_CASES = [pytest.param(call, value, marks=pytest.mark.xfail(reason=_LEFT[call, value],
                                                            strict=True))
          if (call, value) in _LEFT else (call, value) for call in _CALLS for value in _VALUES]


@pytest.mark.parametrize("call, value", _CASES)
def test_bad_number_parameter_as_torch(call, value):
    assert _outcome(gradkit, call, value) == _outcome(torch, call, value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson_of_rates_beyond_int64_draws_torch_overflow(dtype):
    """torch draws in int64: a rate from 2**63 on (inf too) gives -2**63; just below it NumPy's
    largest rate stands in, so the draw stays about the rate."""
    rates = [float("inf"), 1e300, 9.3e18]
    got = gradkit.poisson(gradkit.tensor(rates, dtype=getattr(gradkit, dtype)))
    expected = torch.poisson(torch.tensor(rates, dtype=getattr(torch, dtype)))
    assert got.tolist() == expected.tolist() == [-2.0 ** 63] * 3
    near = gradkit.poisson(gradkit.tensor([9.2e18], dtype=gradkit.float64)).item()
    assert abs(near - 9.2e18) < 1e12
