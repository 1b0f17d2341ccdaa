"""The exact checks that run before any judge (rag/answer/checks.py): each kind of error a capable model makes when
it restates an abstract is caught, and faithful restatements of the same evidence pass."""

from __future__ import annotations

import pytest

from rag.answer.checks import objection
from rag.text import split_quote

EVIDENCE = (
    "Our method improves top-1 accuracy on ImageNet by 3.7% over the baseline. "
    "Training time is reduced 2x compared with prior work on six benchmarks."
)
ABSTRACT = "We study efficient vision transformers. " + EVIDENCE + " The code is public."


@pytest.mark.parametrize(
    "claim, kind",
    [
        ("The method improves ImageNet top-1 accuracy by 4.7% over the baseline.", "number"),
        ("The method improves ImageNet top-1 accuracy by 3.7x over the baseline.", "number"),
        ("The method improves top-1 accuracy on CIFAR-100 by 3.7%.", "name"),
        ("The method does not improve top-1 accuracy on ImageNet.", "negation"),
        ("The method reduces top-1 accuracy on ImageNet by 3.7% relative to the baseline.", "direction"),
        ("The method improves accuracy on every benchmark by 3.7%.", "scope"),
        ("The method improves ImageNet accuracy by 3.7% because it uses sparse attention.", "cause"),
        ("Training time is halved compared with prior work on eight benchmarks.", "number"),
    ],
)
def test_each_kind_of_error_is_caught(claim: str, kind: str) -> None:
    found = objection(claim, EVIDENCE, ABSTRACT)
    assert found is not None and found.kind == kind, found


@pytest.mark.parametrize(
    "claim",
    [
        "The authors report a 3.7% gain in top-1 ImageNet accuracy over the baseline.",
        "Compared with prior work, the approach halves training time and raises ImageNet top-1 accuracy by 3.7%.",
        "The proposed approach trains 2x faster than earlier methods.",
        "Training takes half the time of prior work on 6 benchmarks.",
    ],
)
def test_faithful_restatements_pass(claim: str) -> None:
    assert objection(claim, EVIDENCE, ABSTRACT) is None


def test_an_objection_is_not_an_accusation_by_default() -> None:
    found = objection("The method improves ImageNet top-1 accuracy by 4.7% over the baseline.", EVIDENCE, ABSTRACT)
    assert found is not None and not found.contradicts and "4.7" in found.detail


def test_a_quoted_answer_line_splits_into_sentence_and_words() -> None:
    line = 'Accuracy rises by 3.7% [2] | "improves top-1 accuracy on ImageNet by 3.7%"'
    assert split_quote(line) == ("Accuracy rises by 3.7% [2]", "improves top-1 accuracy on ImageNet by 3.7%")
    assert split_quote("A sentence without its words [1].") == ("A sentence without its words [1].", None)


def test_a_negated_claim_is_read_against_the_sentence_it_restates() -> None:
    """'without' elsewhere in the evidence does not make "cannot improve" a restatement of "can improve"."""
    evidence = (
        "We find that using SAM alone can improve adversarial robustness. "
        "SAM improves robustness without sacrificing any clean accuracy."
    )
    found = objection("Using SAM alone cannot improve adversarial robustness.", evidence, evidence)
    assert found is not None and found.kind == "negation"
    assert objection("Clean accuracy is not sacrificed when SAM improves robustness.", evidence, evidence) is None
