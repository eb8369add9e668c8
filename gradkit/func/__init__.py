"""gradkit.func: torch.func's composable transforms (grad, vjp, jvp, jacrev, jacfwd, hessian,
linearize, vmap, functional_call, functionalize, stack_module_state) on gradkit's autograd.
See docs/func.md.

>>> from gradkit.func import grad, vmap
>>> vmap(grad(lambda x: (x ** 2).sum()))(gradkit.ones(3, 2))
tensor([[2., 2.],
        [2., 2.],
        [2., 2.]])
"""
from gradkit._not_implemented import module_getattr
from gradkit.func.functional_call import functional_call
from gradkit.func.functionalize import functionalize
from gradkit.func.jacobians import hessian, jacfwd, jacrev
from gradkit.func.module_state import replace_all_batch_norm_modules_, stack_module_state
from gradkit.func.transforms import grad, grad_and_value, jvp, linearize, vjp
from gradkit.func.vmap import vmap

__all__ = ["functional_call", "functionalize", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "replace_all_batch_norm_modules_",
           "stack_module_state", "vjp", "vmap"]

__getattr__ = module_getattr(__name__)  # names torch.func has that gradkit lacks
