"""The offline evaluation harness (`rag eval`): runs, datasets, metrics, reports and their comparison."""

from rag.evaluation.harness import RunConfig, load_config, load_dataset
from rag.evaluation.reports import compare_folders, markdown
from rag.evaluation.runner import check_gold_indexed, evaluate, load_datasets

__all__ = [
    "RunConfig",
    "check_gold_indexed",
    "compare_folders",
    "evaluate",
    "load_config",
    "load_dataset",
    "load_datasets",
    "markdown",
]
