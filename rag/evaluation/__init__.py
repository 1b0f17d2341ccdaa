"""The offline evaluation harness (`rag eval`): runs, datasets, metrics, reports and their comparison."""

from rag.evaluation.harness import RunConfig, load_config, load_dataset
from rag.evaluation.reports import compare_folders, markdown
from rag.evaluation.runner import evaluate

__all__ = ["RunConfig", "compare_folders", "evaluate", "load_config", "load_dataset", "markdown"]
