"""gradkit.utils.data: torch.utils.data's datasets, samplers, collation and DataLoader
(in the main process or in worker processes, docs/data.md); the random samplers draw from
gradkit's generators.
"""
from gradkit._not_implemented import module_getattr
from gradkit.utils.data._utils.collate import default_collate, default_convert
from gradkit.utils.data.dataloader import DataLoader, get_worker_info
from gradkit.utils.data.dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,
                                        StackDataset, Subset, TensorDataset, random_split)
from gradkit.utils.data.distributed import DistributedSampler
from gradkit.utils.data.sampler import (BatchSampler, RandomSampler, Sampler,
                                        SequentialSampler, SubsetRandomSampler,
                                        WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info",
           "random_split"]

__getattr__ = module_getattr(__name__)
