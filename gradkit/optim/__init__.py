"""gradkit.optim: optimizers with torch.optim's names, defaults and state dicts."""
from gradkit._not_implemented import module_getattr
from gradkit.optim import lr_scheduler, swa_utils
from gradkit.optim.adafactor import Adafactor
from gradkit.optim.adagrad import Adadelta, Adagrad
from gradkit.optim.adam import Adam, AdamW
from gradkit.optim.adam_variants import Adamax, NAdam, RAdam
from gradkit.optim.lbfgs import LBFGS
from gradkit.optim.muon import Muon
from gradkit.optim.optimizer import Optimizer
from gradkit.optim.rmsprop import RMSprop
from gradkit.optim.rprop import Rprop
from gradkit.optim.sgd import ASGD, SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "Adafactor", "Muon",
           "lr_scheduler", "swa_utils"]

__getattr__ = module_getattr(__name__)  # names torch features gradkit lacks
