"""gradkit.func: torch.func's composable transforms (grad, vjp, jvp, jacrev, jacfwd, hessian,
linearize, vmap, functional_call) on gradkit's autograd. See docs/func.md.

>>> from gradkit.func import grad, vmap
>>> vmap(grad(lambda x: (x ** 2).sum()))(gradkit.ones(3, 2))
tensor([[2., 2.],
        [2., 2.],
        [2., 2.]])
"""
from gradkit._not_implemented import module_getattr
from gradkit.func.functional_call import functional_call
from gradkit.func.jacobians import hessian, jacfwd, jacrev
from gradkit.func.transforms import grad, grad_and_value, jvp, linearize, vjp
from gradkit.func.vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "vjp", "vmap"]

__getattr__ = module_getattr(__name__)  # names torch.func has that gradkit lacks
