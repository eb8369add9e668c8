"""gradkit.nn: layers (Modules), Parameter, init and functional, with torch.nn's names."""
from gradkit.nn import functional, init
from gradkit.nn.activation import GELU, Flatten, ReLU, Sigmoid, Tanh
from gradkit.nn.container import ModuleList, Sequential
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter

__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "ReLU", "Tanh", "Sigmoid", "GELU",
           "Flatten", "init", "functional"]
