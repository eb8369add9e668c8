"""gradkit.optim: optimizers with torch.optim's names, defaults and state dicts."""
from gradkit.optim.adam import Adam, AdamW
from gradkit.optim.optimizer import Optimizer
from gradkit.optim.rmsprop import RMSprop
from gradkit.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop"]
