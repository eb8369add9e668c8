"""``gradkit.special``: torch.special's functions, with torch's values and gradients.

Most are new ops (erfcx, entr, ndtr, ndtri, log_ndtr, i0e, i1, i1e, xlog1py, zeta, gammainc,
gammaincc, the Bessel and Airy functions, the orthogonal polynomials); the rest are torch's
aliases of gradkit functions (expit is sigmoid, gammaln is lgamma, psi is digamma, ...).

>>> import gradkit
>>> x = gradkit.tensor([0.5, 2.0], requires_grad=True)
>>> gradkit.special.i0e(x).sum().backward()
>>> x.grad  # i1e(x) - sgn(x) i0e(x)
tensor([-0.4886, -0.0932])
"""
from gradkit.ops.keywords import take_numpy_names
from gradkit._not_implemented import module_getattr as _module_getattr
from gradkit.ops.activations import sigmoid as expit  # noqa: F401
from gradkit.ops.binary_math import xlogy  # noqa: F401
from gradkit.ops.elementwise import erf, exp2, expm1, log1p  # noqa: F401
from gradkit.ops.elementwise_special import erfc, erfinv, logit, sinc  # noqa: F401
from gradkit.ops.gamma import digamma, i0, i1, polygamma  # noqa: F401
from gradkit.ops.gamma import lgamma as gammaln  # noqa: F401
from gradkit.ops.gamma import mvlgamma as multigammaln  # noqa: F401
from gradkit.ops.piecewise import round  # noqa: F401,A004
from gradkit.ops.reduction import log_softmax, logsumexp, softmax  # noqa: F401
from gradkit.ops.orthogonal_polynomials import (  # noqa: F401
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
    chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l,
    legendre_polynomial_p, shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w)
from gradkit.ops.special_bessel import (  # noqa: F401
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_i0, modified_bessel_i1,
    modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1,
    spherical_bessel_j0)
from gradkit.ops.special_functions import (  # noqa: F401
    entr, erfcx, gammainc, gammaincc, i0e, i1e, log_ndtr, ndtr, ndtri, xlog1py, zeta)

psi = digamma

__getattr__ = _module_getattr(__name__)  # torch.special names gradkit lacks: a clear error

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
           "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
           "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
take_numpy_names(globals(), __all__)  # x=, axis= ... as torch's parser takes them
