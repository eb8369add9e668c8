"""torch.__future__: switches for behaviours that will change (module conversions).

>>> gradkit.__future__.get_overwrite_module_params_on_conversion()
False
"""
_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """True: ``Module._apply`` (``.double()``, ``.to()``...) puts new Parameter objects (and
    gradients) in the module instead of giving the old ones the converted data."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether module conversions replace the Parameter objects (False by default)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """True: ``Module._apply`` swaps each Parameter's contents with its converted one
    (``gradkit.utils.swap_tensors``), keeping the objects; takes precedence over overwriting."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether module conversions swap the Parameter objects' contents (False by default)."""
    return _swap_module_params_on_conversion
