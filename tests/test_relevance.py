"""Answers that answer: the relevance of sentences and abstracts to the question, on the real seed index with the
real embedding model. The refusal gate, the choice of extractive sentences (single- and multi-paper), the final
answer's topic filter (with a scripted LLM), and the sentences a local model picks its answer from."""

from __future__ import annotations

import pytest
from scripted import ScriptedLLM

from rag.answer.extractive import answering_scores, key_sentences
from rag.answer.pipeline import OFF_TOPIC
from rag.answer.relevance import (
    DENSE_FLOORS,
    REFUSAL_THRESHOLDS,
    Question,
    entailment_reader,
    gate_threshold,
    question_terms,
)
from rag.answer.sources import Source
from rag.engine import Engine

SAM_DOC = "000_c1913070b188e76b#5"
SAM_QUESTION = "Can sharpness-aware minimization alone make a classifier more robust to adversarial attacks?"
SAM_FINDING = "We find that using SAM alone can improve adversarial robustness"
SAM_CODE = "Code is available at https://github.com/weizeming/SAM_AT"  # verbatim, true, and beside the point
GNN_DOC = "000_c1913070b188e76b#19"
GNN_QUESTION = (
    "How does a multi-track message passing scheme address oversmoothing and oversquashing in deep graph neural "
    "networks?"
)
GNN_ANSWER = "We propose a novel multi-track graph convolutional network to address oversmoothing and oversquashing"
IRL_PAPERS = {"000_c1913070b188e76b#10", "001_dbd7992a14932e83#16", "004_b162160cb3a036d7#10"}


def test_a_near_domain_question_the_index_cannot_answer_is_refused(engine: Engine) -> None:
    # Machine learning, like the seeds, but no seed abstract compares optimizers for vision transformers.
    answer = engine.ask("Which optimizer gives vision transformers the best ImageNet accuracy?", "extractive")
    assert answer.refused and answer.citations == []


def test_the_refusal_threshold_is_the_one_calibrated_for_the_embeddings_unless_set(engine: Engine, scripted) -> None:
    # Each precision of the embeddings has its threshold, chosen on an index of that precision.
    assert gate_threshold(None, "int8") != gate_threshold(None, "fp32") == REFUSAL_THRESHOLDS["fp32"]
    assert engine.pipeline.refusal_threshold == REFUSAL_THRESHOLDS[engine.library.embedder.precision]
    question = "Which optimizer gives vision transformers the best ImageNet accuracy?"  # refused above
    lenient, _ = scripted(refusal_threshold=engine.pipeline.addressed(question) - 0.01)  # RAG_REFUSAL_THRESHOLD
    assert lenient.pipeline.refusal_threshold < engine.pipeline.refusal_threshold
    assert not lenient.ask(question, "extractive").refused


def test_a_question_in_plain_words_passes_on_its_closest_abstracts_similarity(engine: Engine, scripted) -> None:
    # Plain words share few words with the abstract: the score stays under the threshold, the similarity does not.
    question = "What did the papers find about making networks robust to attacks without retraining from scratch?"
    score, similarity = engine.pipeline.gate_reading(question)
    assert score < engine.pipeline.refusal_threshold
    assert engine.pipeline.refusal_dense_floor == DENSE_FLOORS[engine.library.embedder.precision]
    below, _ = scripted(refusal_dense_floor=similarity - 0.01)  # RAG_REFUSAL_DENSE_FLOOR
    answer = below.ask(question, "extractive")
    assert not answer.refused and SAM_DOC in {c.doc_id for c in answer.citations}
    above, _ = scripted(refusal_dense_floor=similarity + 0.01)
    assert above.ask(question, "extractive").refused


def test_a_short_factual_question_with_a_number_is_answered_with_the_number(engine: Engine) -> None:
    answer = engine.ask("What FID does the Consistency Trajectory Model reach on CIFAR-10?", "extractive")
    assert not answer.refused
    assert [c.doc_id for c in answer.citations] == ["004_b162160cb3a036d7#19"]
    assert "FID 1.73" in answer.answer


def test_a_neighbouring_papers_tangential_sentence_is_left_out(engine: Engine) -> None:
    # Another paper's "Our sampling algorithm generalizes walk-jump sampling (...)" is similar, not an answer.
    answer = engine.ask("How does discrete walk-jump sampling generate antibodies?", "extractive")
    assert [c.doc_id for c in answer.citations] == ["004_b162160cb3a036d7#1"]
    answer = engine.ask(SAM_QUESTION, "extractive")
    assert [c.doc_id for c in answer.citations] == [SAM_DOC]


def test_a_question_about_several_papers_cites_each_of_them(engine: Engine) -> None:
    answer = engine.ask("Which papers study inverse reinforcement learning?", "extractive")
    assert {c.doc_id for c in answer.citations} == IRL_PAPERS


def test_the_sentence_that_answers_is_chosen_over_those_that_restate_the_question(engine: Engine) -> None:
    # The abstract's opening sentence names the problem in the question's own words ("message passing",
    # "oversmoothing and oversquashing") and resembles it most; the cross-encoder's re-reading of the best few finds
    # the sentence that says how the scheme addresses them. (Until the verifier's model was retrained in issue 30
    # the same held for a question on how Givens rotations cut orthogonal fine-tuning's parameters (qGOFT,
    # 000_c1913070b188e76b#11); the retrained model misses that one: see the README, "Relevance and
    # refusal".)
    answer = engine.ask(GNN_QUESTION, "extractive")
    assert [c.doc_id for c in answer.citations] == [GNN_DOC] and answer.answer.startswith(GNN_ANSWER)
    library, pipeline = engine.library, engine.pipeline
    source = Source(1, GNN_DOC, library.abstracts([GNN_DOC])[GNN_DOC])
    pipeline.verifier.prepare([source])
    vector, terms = library.query_vector(GNN_QUESTION), pipeline.question_terms(GNN_QUESTION)
    reread = answering_scores(source, Question(GNN_QUESTION, vector, terms, pipeline.reader_for(GNN_QUESTION)))
    plain = answering_scores(source, Question(GNN_QUESTION, vector, terms))
    assert source.sentences[int(reread.argmax())].startswith(GNN_ANSWER)
    assert not source.sentences[int(plain.argmax())].startswith(GNN_ANSWER)  # the embedding and words alone miss it


def test_the_reader_reads_each_sentence_once_per_question(engine: Engine) -> None:
    model = engine.pipeline.verifier.judge.model
    read_pairs: list[int] = []

    class Counting:  # the real model, counting what it is given
        def probabilities(self, pairs):  # type: ignore[no-untyped-def]
            read_pairs.append(len(pairs))
            return model.probabilities(pairs)

    speaks_to = entailment_reader(Counting(), SAM_QUESTION)  # type: ignore[arg-type]
    withheld = " " * 40  # how the verifier blanks a sentence it withholds (an instruction to the assistant)
    first = speaks_to([SAM_FINDING, SAM_CODE, withheld])
    again = speaks_to([SAM_CODE, SAM_FINDING])
    assert read_pairs == [2]  # the blank sentence is never read, the others once
    assert first[0] > 10 * first[1] and first[2] == 0.0  # the finding speaks to the question; the code link not
    assert again.tolist() == [first[1], first[0]]


def test_what_a_question_asks_for() -> None:
    assert question_terms("How many patients were enrolled?", {}).answer_type == "quantity"
    assert question_terms("What FID does CTM reach on CIFAR-10?", {}).answer_type == "quantity"
    named = question_terms("Which sampler builds on stochastic localization?", {})
    assert named.answer_type == "name" and named.gives_answer_type("We provide SLIPS, a sampler.")
    assert not named.gives_answer_type("The sampler builds on stochastic localization.")
    abbreviated = question_terms("Which algorithms estimate the reward of inverse reinforcement learning?", {})
    assert not abbreviated.gives_answer_type("Inverse reinforcement learning (IRL) recovers rewards.")  # not a name
    assert question_terms("Which papers use diffusion policies?", {}).asks_several
    assert question_terms("Does SAM improve robustness?", {}).answer_type == "other"


@pytest.fixture
def scripted(seeds_settings, engine):
    def make(*replies: str, **settings) -> tuple[Engine, ScriptedLLM]:
        llm = ScriptedLLM(*replies)
        return Engine(seeds_settings.model_copy(update=settings), llm=llm, embedder=engine.library.embedder), llm

    return make


def test_a_verified_sentence_that_does_not_address_the_question_is_left_out(scripted) -> None:
    engine, _ = scripted(f"{SAM_FINDING} [1]. {SAM_CODE} [1].", llm_pick_sentences=False)
    answer = engine.ask(SAM_QUESTION, "local")
    assert answer.answer == f"{SAM_FINDING} [1]."
    dropped = answer.contract()["verifier"]["dropped_sentences"]
    assert dropped == [{"text": f"{SAM_CODE}.", "reason": OFF_TOPIC, "quote": None, "doc_id": None, "detail": None}]


def test_a_local_model_is_given_the_most_relevant_sentences_to_pick_from(scripted) -> None:
    engine, llm = scripted(f"{SAM_FINDING} [1].")
    engine.ask(SAM_QUESTION, "local")
    assert llm.choices and any("SAM alone can improve adversarial robustness" in c for c in llm.choices)
    sam = engine.library.abstracts([SAM_DOC])[SAM_DOC]
    for choice in llm.choices:
        assert choice.endswith("[1]") and choice.removesuffix(" [1]") in sam  # verbatim, with its marker
    engine.summarize("adversarial robustness", "local")
    assert llm.choices is None  # a summary is written, not picked
    engine, llm = scripted(f"{SAM_FINDING} [1].", llm_pick_sentences=False)
    engine.ask(SAM_QUESTION, "local")
    assert llm.choices is None


def test_the_sentence_picker_allows_only_whole_given_sentences_each_once(seeds_settings) -> None:
    from llama_cpp import Llama

    from rag.answer.llm import SentencePicker, find_gguf

    vocabulary = Llama(model_path=str(find_gguf(seeds_settings)), vocab_only=True, verbose=False)
    choices = ["SAM improves robustness [1].", "Code is online [2]."]
    picker = SentencePicker(vocabulary, choices)
    first, second = picker.first
    assert picker.allowed([]) == {first[0], second[0]}  # a sentence must begin; no empty answer
    assert picker.allowed(first[:1]) == {first[1]}  # and go on as written
    assert picker.allowed(first) == {picker.later[1][0]}  # at least two sentences, never one twice
    assert picker.allowed(first + picker.later[1]) == {picker.eos}  # every sentence used
    text = vocabulary.detokenize(first + picker.later[1]).decode()
    assert text == "SAM improves robustness [1]. Code is online [2]."
    three = SentencePicker(vocabulary, [*choices, "A third one [3]."])
    after_two = three.allowed(three.first[0] + three.later[1])
    assert after_two == {three.eos, three.later[2][0]}  # two said: stop, or add the third


STROKE_ABSTRACT = (
    "The aim of this study was to learn what share of elderly outpatients would call emergency services when shown "
    "the warning signs of a stroke. We surveyed 367 elderly outpatients of a public clinic in 2014 and report 95% CI "
    "for each estimate. Only 14% of them would correctly call emergency services. Knowledge of stroke symptoms was "
    "poor, and most would wait for the symptoms to pass."
)


@pytest.mark.parametrize(
    ("question", "answer", "not_answer"),
    [
        ("What share of elderly outpatients would call emergency services for stroke warning signs?", "14%", "aim"),
        ("How many elderly outpatients were surveyed about calling emergency services for a stroke?", "367", "aim"),
    ],
)
def test_a_quantity_question_gets_sentences_that_state_the_number_it_asks_for(
    engine: Engine, question: str, answer: str, not_answer: str
) -> None:
    # The aim sentence restates the question best and states no number; a share is a percentage, and "95% CI"
    # is a confidence level, not one.
    library, pipeline = engine.library, engine.pipeline
    source = Source(1, "stroke", STROKE_ABSTRACT)
    pipeline.verifier.prepare([source])
    asked = Question(question, library.query_vector(question), pipeline.question_terms(question))
    picked = [source.sentences[i] for i in key_sentences(source, asked, 0.9)]
    assert any(answer in s for s in picked)
    assert not any(not_answer in s for s in picked)


def test_the_kind_of_number_a_quantity_question_asks_for() -> None:
    share = question_terms("What proportion of patients relapsed within a year?", {})
    assert share.answer_type == "quantity"
    assert share.states_unit("Of them, 14% relapsed.") and share.states_unit("Twelve per cent relapsed.")
    assert not share.states_unit("We report 95% CI for each estimate.")  # a confidence level
    assert not share.states_unit("Of 367 patients, 52 relapsed within 1 year.")
    duration = question_terms("How long was the coaching session?", {})
    assert duration.states_unit("Patients had a 20-minute session.") and duration.states_unit("It lasted 3 weeks.")
    assert not duration.states_unit("Sixty-seven patients with 2 tumours took part.")
    sensitive = question_terms("How sensitive was the shape model at telling clots from plaque?", {})
    assert sensitive.answer_type == "quantity" and sensitive.states_unit("It had a sensitivity of 87.5%.")
    median = question_terms("What was the median overall survival after surgery?", {})
    assert median.answer_type == "quantity" and median.states_unit("The median OS was 16.4 months.")
    assert not median.states_unit("Tumours were staged in 45 patients.")
    count = question_terms("How many patients were enrolled?", {})
    assert count.answer_type == "quantity" and not count.states_unit("We enrolled 367 patients.")  # any number
    assert count.gives_answer_type("We enrolled 367 patients.")
