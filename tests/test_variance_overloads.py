"""var/std/var_mean/std_mean's ``(bool unbiased)`` signature and the ``_saved_dim`` /
``_saved_correction`` their nodes show, compared with torch 2.13 on the same programs.
(gradkit read ``var_mean(x, True)`` as ``dim=1``: a silent wrong number.)"""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

DATA = np.random.default_rng(5).random((3, 4))

CALLS = {
    "var_true": lambda lib, x: x.var(True),
    "var_false": lambda lib, x: lib.var(x, False),
    "std_true": lambda lib, x: lib.std(x, True),
    "std_false": lambda lib, x: x.std(False),
    "var_mean_true": lambda lib, x: lib.var_mean(x, True),
    "var_mean_false": lambda lib, x: lib.var_mean(x, False),
    "std_mean_false": lambda lib, x: lib.std_mean(x, False),
    "var_dim_unbiased": lambda lib, x: x.var(1, False, True),
    "var_unbiased_keyword": lambda lib, x: x.var(unbiased=False),
}


def _values(lib, call):
    x = lib.tensor(DATA, requires_grad=True)
    out = call(lib, x)
    outs = out if isinstance(out, tuple) else (out,)
    sum(o.sum() for o in outs).backward()
    return [o.detach().numpy() for o in outs], x.grad.numpy()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_lone_bool_is_unbiased_as_torch(name):
    ours, theirs = _values(gradkit, CALLS[name]), _values(torch, CALLS[name])
    for a, b in zip(ours[0] + [ours[1]], theirs[0] + [theirs[1]], strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12)


REFUSED = {
    "bool_and_keepdim": (lambda lib, x: x.var(True, keepdim=True),
                         "var() received an invalid combination of arguments - got (bool, "
                         "keepdim=bool)"),
    "two_bools": (lambda lib, x: x.std(True, True),
                  "std() received an invalid combination of arguments - got (bool, bool)"),
    "bool_dim_keyword": (lambda lib, x: x.var(dim=True),
                         "var() received an invalid combination of arguments - got (dim=bool, )"),
    "unbiased_and_correction": (lambda lib, x: x.var(1, unbiased=True, correction=1),
                                "var() received an invalid combination of arguments - got "
                                "(int, correction=int, unbiased=bool)"),
    "var_mean_two_bools": (lambda lib, x: lib.var_mean(x, True, True),
                           "var_mean() received an invalid combination of arguments - got "),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_other_combinations_are_refused_as_torch(name):
    call, message = REFUSED[name]
    for lib in (torch, gradkit):
        with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
            call(lib, lib.tensor(DATA))


SAVED = {
    "var()": lambda x: x.var(), "var(True)": lambda x: x.var(True),
    "var(unbiased=False)": lambda x: x.var(unbiased=False), "var(1)": lambda x: x.var(1),
    "var(1, False)": lambda x: x.var(1, False), "var(correction=2)": lambda x: x.var(correction=2),
    "std((0, 1), correction=0)": lambda x: x.std((0, 1), correction=0),
    "var_mean(1)": lambda x: gradkit_or_torch(x).var_mean(x, 1)[0],
    "sum(1)": lambda x: x.sum(1), "mean((0, 1))": lambda x: x.mean((0, 1)),
    "amax()": lambda x: x.amax(), "amin(0)": lambda x: x.amin(0),
    "logsumexp(1)": lambda x: x.logsumexp(1), "nansum(0)": lambda x: x.nansum(0),
    "linalg.vector_norm(dim=1)": lambda x: gradkit_or_torch(x).linalg.vector_norm(x, dim=1),
    "linalg.norm(1-D, ord=3)": lambda x: gradkit_or_torch(x).linalg.norm(x[0], 3),
    "pairwise_distance": lambda x: gradkit_or_torch(x).nn.functional.pairwise_distance(x, x * 2),
}


def gradkit_or_torch(x):
    return gradkit if isinstance(x, gradkit.Tensor) else torch


@pytest.mark.parametrize("name", sorted(SAVED))
def test_saved_dim_and_correction_in_torch_form(name):
    # torch's int[] dim is a tuple also for one dim; var's correction is the one it used
    nodes = [SAVED[name](lib.tensor(DATA, requires_grad=True)).grad_fn for lib in (gradkit, torch)]
    for attribute in ("_saved_dim", "_saved_correction"):
        if hasattr(nodes[1], attribute):
            assert getattr(nodes[0], attribute) == getattr(nodes[1], attribute), attribute


@pytest.mark.parametrize("lib", [gradkit, torch], ids=["gradkit", "torch"])
def test_median_dim_must_be_an_int(lib):
    x = lib.tensor(DATA)
    with pytest.raises(TypeError, match=r"median\(\): argument 'dim' \(position 1\) must be "
                                        r"int, not tuple"):
        x.median((0, 1))
    with pytest.raises(TypeError, match=r"nanmedian\(\): argument 'dim' \(position \d\) must be "
                                        r"int, not float"):
        lib.nanmedian(x, 1.5)
