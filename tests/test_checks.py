"""The exact checks that run before any judge (rag/answer/checks.py): each kind of error a capable model makes when
it restates an abstract is caught, and faithful restatements of the same evidence pass."""

from __future__ import annotations

import pytest

from rag.answer.checks import lexical_gaps, objection, restates_numbers, reversed_change
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


FINDINGS = (
    "We enrolled 52 patients with gastric cancer. Sensitivity was measured against histopathology. "
    "EUS showed higher sensitivity (94%) than MDCT and MRI (65 and 76%). "
    "Adding MRI to MDCT or EUS did not result in significant differences for sensitivity. "
    "Patients on the new regimen used more analgesics than controls. "
    "The pump failed with all inflow rates tested. "
    "No neochord rupture was found during follow-up."
)


@pytest.mark.parametrize(
    "claim, kind",
    [
        ("Adding MRI to MDCT or EUS significantly improved sensitivity.", "negation"),
        ("Patients on the new regimen used fewer analgesics than controls.", "direction"),
    ],
)
def test_what_capable_models_get_wrong_in_plain_words(claim: str, kind: str) -> None:
    """A significant finding the abstract denies; "fewer" where the abstract says "more"."""
    found = objection(claim, FINDINGS, FINDINGS)
    assert found is not None and found.kind == kind, found


@pytest.mark.parametrize(
    "claim",
    [
        # a synthesis whose negation comes from a sentence other than the closest one
        "Among 52 patients with gastric cancer, EUS was the most sensitive and no neochord rupture was found.",
        # the same scope in other words
        "The pump failed at every inflow rate tested.",
        # a name joined to a plain word the abstract uses elsewhere
        "EUS-measured sensitivity was higher than that of MDCT and MRI (94% against 65 and 76%).",
    ],
)
def test_faithful_sentences_written_the_way_capable_models_write_them_pass(claim: str) -> None:
    assert objection(claim, FINDINGS, FINDINGS) is None


def test_a_result_is_restated_when_its_numbers_come_in_the_abstracts_order() -> None:
    assert restates_numbers("EUS reached 94% sensitivity, against 65% and 76% for MDCT and MRI.", FINDINGS)
    assert not restates_numbers("EUS reached 76% sensitivity, against 94% for MRI.", FINDINGS)
    assert restates_numbers("EUS reached 94% sensitivity.", FINDINGS) is None  # one number is no restated result
    effects = "The effect sizes were .5 for pain and .8 for function."  # decimals written without their 0
    assert restates_numbers("Effect sizes were 0.5 for pain and 0.8 for function.", effects)
    assert restates_numbers("Effect sizes were .5 and .8.", effects)
    assert not restates_numbers("Effect sizes were .8 for pain and .5 for function.", effects)


WRITTEN_AS = (
    "From a total of 322 246 pregnancies, 20 885 CVS results were analysed. "
    "Fifty-one percent of hospice residents received regular treatment. "
    "Mortality was lowest at a BMI of 22.5-25 kg/m(2). "
    "Patients received three 5-min cycles of ischemia in the Indonesia Demographic and Health Survey. "
    "SCFFBW7 degrades MYC, and the LXA(4) analog binds GSK-3\u03b2. "
    "Rate of febrile neutropenia was 9.3% versus 7.4% (P = 0.56). "
    "Only the TCR cluster was imaged. "
    "Two hundred and seven patients were enrolled, and one thousand one cases were analysed. "
    "Depletion of histone deacetylase 1 by small interfering RNA lowered insulin-like growth factor 2 levels. "
    "Scores on the short form-12 improved in 68.7% v. 56.3% of patients."
)


@pytest.mark.parametrize(
    "claim",
    [
        "Of 322,246 pregnancies, 20,885 chorionic villus sampling results were analysed.",  # digits grouped otherwise
        "Regular treatment was given to 51% of hospice residents.",  # a compound number word in the abstract
        "Mortality was lowest at a BMI of about 22.5-25 kg/m2.",  # a superscript in brackets
        "Patients received three 5-minute cycles of ischemia.",  # a number joined to a word the abstract cuts short
        "The data came from the Indonesia DHS.",  # an acronym of words joined by "and"
        "The SCF-FBW7 ligase degrades MYC, and the LXA4 analog binds GSK-3beta.",  # hyphens, brackets, Greek letters
        "Febrile neutropenia was 9.3% against 7.4%, a difference that was not significant.",  # a p-value above 0.05
        "Only TCRs in the cluster were imaged.",  # "only" and a plural name
        "207 patients were enrolled and 1,001 cases were analysed.",  # numbers in words, "and" and "thousand"
        "Depleting HDAC1 with siRNA lowered Igf2 levels.",  # abbreviations the abstract spells out
        "SF-12 scores improved in 68.7% against 56.3% of patients.",  # "v." ends no sentence
    ],
)
def test_faithful_sentences_pass_however_the_abstract_writes_numbers_and_names(claim: str) -> None:
    assert objection(claim, WRITTEN_AS, WRITTEN_AS) is None


@pytest.mark.parametrize(
    "claim",
    [
        "Of 322,246 pregnancies, 20,855 results were analysed.",
        "Regular treatment was given to 15% of hospice residents.",
        "Patients received three 5-minute cycles of ischemia in the Danish National Patient Registry.",
        "The SCF-FBW9 ligase degrades MYC.",
        "Regular treatment was not given to hospice residents.",
        "208 patients were enrolled.",
        "Depleting HDAC2 with siRNA lowered Igf2 levels.",
        "Depleting HDAC1 with shRNA lowered Igf2 levels.",
        "SF-36 scores improved in 68.7% of patients.",
    ],
)
def test_those_normalisations_still_catch_a_changed_number_name_or_negation(claim: str) -> None:
    assert objection(claim, WRITTEN_AS, WRITTEN_AS) is not None


OUTCOMES = (
    "Morbidity decreased from 48.6% to 46.1% (p = 0.6). "
    "The risk of CIN2+ was highest among women younger than 30 years. "
    "Neighbouring cell membranes promote junction formation."
)


@pytest.mark.parametrize(
    "claim, kind",
    [
        ("Morbidity fell significantly from 48.6% to 46.1%.", "negation"),  # a p-value of 0.6 is not significant
        ("The risk of CIN2+ was lowest among women younger than 30 years.", "direction"),
        ("Neighbouring cell membranes impede junction formation.", "direction"),
    ],
)
def test_a_significance_the_p_value_denies_and_superlatives_or_verbs_reversed(claim: str, kind: str) -> None:
    found = objection(claim, OUTCOMES, OUTCOMES)
    assert found is not None and found.kind == kind, found
    assert objection("Morbidity fell from 48.6% to 46.1%, not significantly.", OUTCOMES, OUTCOMES) is None


BOUNDS = (
    "Sleep apnea was common in the cohort. Patients with an apnea index of 15 or above had markedly lower exercise "
    "capacity (VO2max 28.1 vs 35.4 mL/kg/min). No MRI marker predicted the decline in capacity over 3 years "
    "(P = 0.41). FAAH blockade raised plasma anandamide, and the effect was prevented by CB1 antagonists. The "
    "enzyme is stable and thus represents an attractive target."
)
RELAPSE = (
    "We followed a cohort of 176 patients for 5 years. No significant predictors of relapse were identified. "
    "Symptoms improved in most patients. Our model performs worse than 3 strong baselines. The enzyme is stable and "
    "hence a good target. No correlation between ADT-G and desire was found. The drug reduced mortality at 5 mg."
)
MEASURES = (
    "Nausea was reported by 45 vs. 7% of patients (P = 0.001). Lip-smacking showed a 5 Hz rhythm in 30 monkeys, and "
    "doses of 0.3 mg were given twice daily; the signal rose threefold within 2 min. Obesity is a known risk factor. "
    "We established a rat model of sepsis; the allele may be protective, as was proved in mice. Screening could save "
    "$750 million over 5 years."
)


@pytest.mark.parametrize(
    "abstract, claim",
    [
        # a bound on a number is not a direction ("15 or more", "more than 15")
        (
            BOUNDS,
            "Exercise capacity was lower with an apnea index of 15 or more (VO2max 28.1 vs 35.4 mL/kg/min).",
        ),
        (BOUNDS, "Patients whose apnea index was more than 15 had markedly lower VO2max, 28.1 against 35.4 mL/kg/min."),
        (BOUNDS, "Over 3 years of follow-up, no MRI marker predicted the decline in exercise capacity (P = 0.41)."),
        # "inhibitors" name things; they do not state a decrease
        (BOUNDS, "FAAH inhibitors raised plasma anandamide, an effect that CB1 antagonists prevented."),
        # "thus" and "hence" give a cause as "because" does
        (BOUNDS, "The enzyme is an attractive target because it is stable."),
        (RELAPSE, "The enzyme is a good target because it is stable."),
        # the negation's own clause finds the sentence that denies; the words around it point at the cohort
        (
            RELAPSE,
            "In a cohort of 176 patients followed for 5 years, no significant predictors of relapse were identified.",
        ),
        (RELAPSE, "ADT-G showed no correlation with desire at all."),  # emphasis, not a claim of scope
        # percentages sharing one sign, and small measurements written either way
        (MEASURES, "Nausea was reported by 45% of patients against 7% (P = 0.001)."),
        (MEASURES, "The signal rose 3-fold within 2 minutes."),  # a measure written either way
        (MEASURES, "Obesity is an established risk factor."),  # an adjective, not a certainty
        # certainty in another form of the abstract's own word; "established a model" is a method, not a certainty
        (MEASURES, "It was proven in mice that the allele may be protective."),
        (MEASURES, "The authors established a rat model of sepsis."),
        (MEASURES, "Screening could save as much as $750 Million in five years."),  # a scale word in any case
    ],
)
def test_bounds_measures_things_causes_and_negations_are_read_as_meant(abstract: str, claim: str) -> None:
    assert objection(claim, abstract, abstract) is None


@pytest.mark.parametrize(
    "abstract, claim, kind",
    [
        (BOUNDS, "Patients with an apnea index of 15 or more had markedly higher exercise capacity.", "direction"),
        (BOUNDS, "Plasma anandamide did not rise with FAAH blockade.", "negation"),
        (BOUNDS, "FAAH blockade reduced plasma anandamide, an effect prevented by CB1 antagonists.", "direction"),
        (RELAPSE, "Symptoms remained stable or worsened in most patients.", "direction"),  # "or" bounds no number
        (RELAPSE, "Our model performs better than 3 strong baselines.", "direction"),  # "than 3" bounds no quantity
        (RELAPSE, "The drug reduced mortality at all doses.", "scope"),  # "at all doses" is scope
        (MEASURES, "Lip-smacking showed a 3 Hz rhythm.", "number"),  # a small number with a unit is a measurement
        (MEASURES, "Doses of 3 mg were given twice daily.", "number"),  # "0.3 mg" and "30 monkeys" are not 3 mg
        (MEASURES, "The allele has been established as protective.", "scope"),  # a certainty the abstract hedges
        (MEASURES, "The rat model of sepsis reliably predicts outcomes in patients.", "scope"),
        (MEASURES, "This study establishes obesity as a cause of sepsis.", "scope"),
        (MEASURES, "Screening could save up to $5 billion.", "number"),  # "5" is there, but not "5 billion"
    ],
)
def test_those_readings_still_catch_a_reversed_finding(abstract: str, claim: str, kind: str) -> None:
    found = objection(claim, abstract, abstract)
    assert found is not None and found.kind == kind, found


def test_a_number_with_a_scale_word_is_read_however_either_side_writes_it() -> None:
    abstract = "The programme cost 1,500 million dollars, within a 5-billion-euro budget over five years."
    for claim in (
        "The programme cost 1,500 million dollars.",  # verbatim
        "The programme cost 1500 Million dollars.",
        "The budget was 5 billion euros.",
    ):
        assert objection(claim, abstract, abstract) is None, claim
    found = objection("The programme cost 1,500 billion dollars.", abstract, abstract)
    assert found is not None and found.kind == "number" and "1500 billion" in found.detail
    in_words = "The programme cost fifty-five million dollars."
    for claim, abstract in ((in_words, "It cost 55 million dollars."), ("It cost 55 million dollars.", in_words)):
        assert objection(claim, abstract, abstract) is None, claim
    elsewhere = "55 patients were seen; it cost 56 million dollars."  # 55 is given, but not in millions
    found = objection(in_words, elsewhere, elsewhere)
    assert found is not None and found.kind == "number" and "55 million" in found.detail, found
    for claim, abstract in (  # a bracket closing a range does not join its number to the unit after it
        ("The median cost was 9 million dollars.", "The median cost was 12 (IQR 8-9) million dollars."),
        ("Length of stay was 3 days.", "Length of stay was 7 (IQR 2-3) days."),
        ("500 patients were seen.", "Twenty-five hundred patients were seen."),  # not "five hundred"
    ):
        found = objection(claim, abstract, abstract)
        assert found is not None and found.kind == "number", (claim, found)


def test_a_change_is_read_against_what_the_abstract_says_of_the_same_thing() -> None:
    """A sentence of the abstract saying one thing went up and another down does not back a claim that reverses
    either; what changed is read from the words around each change word."""
    abstract = (
        "Treatment with compound K increased brown adipose tissue activity and decreased plasma triglyceride levels "
        "in healthy women. Cold acclimation brought about retardation of leaf expansion, while de-acclimation "
        "promoted leaf expansion. The intervention group showed a greater reduction in depressive symptoms."
    )
    reversed_ = objection("Compound K decreases brown adipose tissue activity in healthy women.", abstract, abstract)
    assert reversed_ is not None and reversed_.kind == "direction", reversed_
    assert "decrease" in reversed_.detail
    for faithful in (
        "Compound K increased brown adipose tissue activity in healthy women.",
        "Compound K reduced plasma triglyceride levels in healthy women.",
        "Cold acclimation slowed leaf expansion.",  # "retardation of leaf expansion" is a slowing
        "The intervention produced a greater decrease in depressive symptoms.",  # a change of a change
    ):
        assert objection(faithful, abstract, abstract) is None, faithful
    for evidence, faithful in (  # a subject left out, a change of a change, a measure improved, the other side
        ("Systolic blood pressure increased in the placebo group but decreased in the treatment group.",
         "The treatment decreased systolic blood pressure."),
        ("Metformin attenuated the increase in body weight and reduced fasting glucose.",
         "Metformin reduced body weight gain."),
        ("The intervention limited gestational weight gain and reduced the risk of macrosomia.",
         "The intervention reduced gestational weight gain."),
        ("Acupuncture improved pain scores and reduced analgesic use.", "Acupuncture reduced pain scores."),
        ("Controls had lower serum IL-6 and higher IL-10 than patients.",
         "Patients had higher serum IL-6 than controls."),
        ("Flame retardants raised serum thyroxine levels and lowered TSH.",
         "Exposure to flame retardants increased serum thyroxine levels."),  # a retardant is a thing
    ):  # fmt: skip
        assert objection(faithful, evidence, evidence) is None, faithful
    negated = "Compound K did not decrease brown adipose tissue activity."  # the negation check's to read
    assert reversed_change(negated, abstract) is None


@pytest.mark.parametrize(
    "claim, abstract, missing",
    [
        ("CD8 counts rose.", "Blood was drawn on cycle day 8 and counts rose.", ["CD8"]),  # initials by chance
        ("MRI was used.", "We studied mice. Results indicated benefit.", ["MRI"]),  # across a sentence end
        ("7 patients died.", "FBW7 was lost in patients who died.", ["7"]),  # a number inside a name
        ("The 60 patients were seen.", "The sixty-first patient was seen.", ["60"]),  # an ordinal
        ("Patients in Malmö were treated.", "Patients in Lund were treated.", ["Malm"]),
        ("Fifteen thousand patients were seen.", "15,000 patients were seen.", []),
        ("Forty five patients were seen.", "45 patients were seen.", []),
        ("The trial began in 2019 and enrolled 246 patients.", "In 2019 246 patients were enrolled.", []),
        ("The mean was 3.7 mg, the median 25 mg.", "The mean was 3.70 mg, the median 25.0 mg.", []),
        ("Vitamin B6 (VB6) was given.", "Vitamin b6 was given.", []),
        ("The 20 patients were seen.", "The 10-20 patients were seen.", []),
        ("The effect size was 0.5.", "The effect size was .5 (p<.05).", []),  # a decimal without its 0
        ("The effect size was .4.", "The effect size was .5.", ["0.4"]),
        ("Pressure changed by -5 mmHg.", "Pressure changed by -6 mmHg.", ["5"]),  # after a minus sign
        ("Between 100 and 200 patients were seen.", "Between one hundred and two hundred patients were seen.", []),
        ("102 patients were seen.", "Between one hundred and two hundred patients were seen.", ["102"]),
    ],
)
def test_numbers_and_abbreviations_are_read_whole(claim: str, abstract: str, missing: list[str]) -> None:
    assert lexical_gaps(claim, abstract) == missing
