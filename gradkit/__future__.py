"""torch.__future__: switches for behaviours that will change (module conversions).

>>> gradkit.__future__.get_overwrite_module_params_on_conversion()
False
"""
_overwrite_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """True: ``Module._apply`` (``.double()``, ``.to()``...) puts new Parameter objects (and
    gradients) in the module instead of giving the old ones the converted data."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether module conversions replace the Parameter objects (False by default)."""
    return _overwrite_module_params_on_conversion
