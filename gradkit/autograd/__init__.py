"""gradkit.autograd: reverse-mode differentiation with torch.autograd's API."""
from gradkit._not_implemented import module_getattr
from gradkit.autograd import graph  # noqa: F401
from gradkit.autograd.api import backward, grad  # noqa: F401
from gradkit.autograd.anomaly_mode import (  # noqa: F401
    AnomalyReport, detect_anomaly, is_anomaly_check_forward_enabled, is_anomaly_check_nan_enabled,
    is_anomaly_enabled, set_detect_anomaly)
from gradkit.autograd.grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    is_multithreading_enabled, set_grad_enabled, set_multithreading_enabled)
from gradkit.autograd.gradcheck import gradcheck, gradgradcheck  # noqa: F401
from gradkit.autograd import gradcheck_modes  # noqa: F401,E402 - always there: its name too
from gradkit.autograd.function import Function, FunctionCtx, once_differentiable  # noqa: F401
from gradkit.autograd import forward_ad, functional  # noqa: F401,E402
from gradkit.autograd.variable import Variable  # noqa: F401,E402


__getattr__ = module_getattr(__name__)  # names torch features gradkit lacks
