"""Evaluation reports: report.json, report.md (runs by metrics, worst questions), PNG plots; and comparisons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rag.errors import BadInput
from rag.evaluation.harness import CLAIM_LABELS, HIGHER_IS_BETTER, RETRIEVAL_METRICS, STAGES

TABLE_METRICS = (
    *RETRIEVAL_METRICS, "citation_precision", "citation_recall", "support_rate", "answered_rate", "refusal_rate",
    "nearest_gold_rate", "must_contain", "decision_accuracy", "kept_support", "kept_contradict", "kept_nei",
    "accused_support", "accused_contradict", "accused_nei", "balanced_accuracy",
)  # fmt: skip
TOLERANCE = 0.01  # a quality metric that falls by more than this is a regression
LATENCY_TOLERANCE = 1.10  # a p50 latency that grows by more than 10 % is a regression


def dataset_label(dataset: str) -> str:
    """A dataset as reports name it: its folder and file (pubmedqa_tune/questions.jsonl), so that two datasets with
    the same file name are told apart."""
    path = Path(dataset).resolve()  # as given to `rag eval`, from the folder it ran in
    return f"{path.parent.name}/{path.name}"


def write_reports(out: Path, runs: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps({"runs": runs}, indent=1, ensure_ascii=False))
    (out / "report.md").write_text(markdown(runs), encoding="utf-8")
    plot(out, runs)


def fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) and value <= 1 else str(value)


def markdown(runs: list[dict[str, Any]]) -> str:
    shown = [m for m in TABLE_METRICS if any(r["metrics"].get(m) is not None for r in runs)]
    lines = [
        "# Evaluation report",
        "",
        "| run | dataset | questions | " + " | ".join(shown) + " | total p50 ms | time s |",
    ]
    lines.append("|" + "---|" * (len(shown) + 5))
    for r in runs:
        latency = r["metrics"].get("latency_ms", {})
        total = latency.get("total") or latency.get("verify") or latency.get("retrieve", {})
        cells = [fmt(r["metrics"].get(m)) for m in shown]
        p50 = total.get("p50")
        row = [
            r["name"],
            dataset_label(r["dataset"]),
            str(len(r["per_question"])),
            *cells,
            "-" if p50 is None else f"{p50:.0f}",
            fmt(r["metrics"].get("time_s")),
        ]
        lines.append("| " + " | ".join(row) + " |")
    for r in runs:
        lines += verdict_table(r)
        worst = worst_questions(r["per_question"])
        if worst:
            lines += ["", f"## Worst questions: {r['name']} on {dataset_label(r['dataset'])}", ""]
            lines += [f"- `{q['id']}` {q['question']} — {'; '.join(problems)}" for q, problems in worst]
    return "\n".join(lines) + "\n"


def verdict_table(run: dict[str, Any]) -> list[str]:
    """For a claims run: kept and accused shares with their 95 % intervals, per label and per kind of claim."""
    groups = {**run["metrics"].get("by_label", {}), **run["metrics"].get("by_kind", {})}
    if not groups:
        return []
    lines = ["", f"## Verdicts: {run['name']} on {dataset_label(run['dataset'])}", ""]
    lines += ["| claims | n | kept (95 % interval) | accused of contradicting (95 % interval) |", "|---|---|---|---|"]
    for name, rates in groups.items():
        if rates["n"]:
            kept, accused = rates["kept_ci"], rates["accused_ci"]
            lines.append(f"| {name} | {rates['n']} | {rates['kept']:.3f} ({kept[0]:.2f}-{kept[1]:.2f}) | "
                         f"{rates['accused']:.3f} ({accused[0]:.2f}-{accused[1]:.2f}) |")  # fmt: skip
    return lines


def problems_of(q: dict[str, Any]) -> list[str]:
    if "verdict" in q:  # a claim checked against its abstract
        expected = CLAIM_LABELS[q["label"]]
        return [] if q["verdict"] == expected else [f"labelled {q['label']}, judged {q['verdict']} ({q['doc_id']})"]
    found = []
    top5 = [doc for doc, _ in q["ranking"][:5]]
    missing = [g for g in q["gold"] if g not in top5]
    if q["answerable"] and missing:
        found.append(f"gold {', '.join(missing)} not in the top 5")
    if "refused" in q:
        if q["answerable"] and q["refused"]:
            shown = (
                "gold among the closest papers shown"
                if set(q.get("nearest", [])) & set(q["gold"])
                else ("gold not among the closest papers shown")
            )
            found.append(f"refused an answerable question ({q.get('refusal', 'refused')}; {shown})")
        if not q["answerable"] and not q["refused"]:
            found.append(f"answered an unanswerable question (cited {', '.join(q['cited']) or 'nothing'})")
        wrong = [c for c in q["cited"] if q["answerable"] and c not in q["gold"]]
        if wrong:
            found.append(f"cited non-gold {', '.join(sorted(set(wrong)))}")
        if not all(q.get("must_contain_hits", [])):
            found.append("answer lacks a must_contain term")
        if q.get("decision_correct") is False:
            found.append(f"decided {q.get('decision')!r}")
    return found


def worst_questions(results: list[dict[str, Any]], n: int = 5) -> list[tuple[dict[str, Any], list[str]]]:
    scored = [(q, problems_of(q)) for q in results]
    return sorted((item for item in scored if item[1]), key=lambda item: -len(item[1]))[:n]


def plot(out: Path, runs: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['name']}\n{Path(r['dataset']).stem}" for r in runs]
    shown = [m for m in TABLE_METRICS if any(r["metrics"].get(m) is not None for r in runs)]
    fig, ax = plt.subplots(figsize=(min(14, 0.9 * len(shown) + 4), 5))
    width = 0.8 / max(len(runs), 1)
    for i, r in enumerate(runs):
        values = [r["metrics"].get(m) or 0.0 for m in shown]
        ax.bar([x + i * width for x in range(len(shown))], values, width, label=labels[i])
    ax.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(shown))], shown, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_title("Metrics by run")
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(out / "metrics_by_run.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    data = [[q["timings_ms"].get("total", q["timings_ms"].get("retrieve", 0)) for q in r["per_question"]] for r in runs]
    ax.boxplot(data)
    ax.set_xticks(range(1, len(runs) + 1), labels, fontsize=7)
    ax.set_ylabel("ms per question (total)")
    ax.set_title("Latency distribution")
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)


def compare(report_a: dict[str, Any], report_b: dict[str, Any]) -> tuple[list[str], int]:
    """Lines describing B against A per (run, dataset), and the number of regressions flagged."""
    before = {(r["name"], dataset_label(r["dataset"])): r["metrics"] for r in report_a["runs"]}
    lines, regressions = ["| run | dataset | metric | A | B | change | |", "|---|---|---|---|---|---|---|"], 0
    for r in report_b["runs"]:
        key = (r["name"], dataset_label(r["dataset"]))
        if key not in before:
            continue
        old, new = before[key], r["metrics"]
        for metric in HIGHER_IS_BETTER:
            a, b = old.get(metric), new.get(metric)
            if a is None or b is None:
                continue
            worse = b < a - TOLERANCE
            regressions += worse
            flag = "REGRESSION" if worse else ""
            lines.append(f"| {key[0]} | {key[1]} | {metric} | {a:.3f} | {b:.3f} | {b - a:+.3f} | {flag} |")
        for stage in STAGES:
            a = old.get("latency_ms", {}).get(stage, {}).get("p50")
            b = new.get("latency_ms", {}).get(stage, {}).get("p50")
            if a and b:
                worse = b > a * LATENCY_TOLERANCE and b - a > 5
                regressions += worse
                flag = "REGRESSION" if worse else ""
                lines.append(f"| {key[0]} | {key[1]} | {stage} p50 ms | {a:.0f} | {b:.0f} | {b - a:+.0f} | {flag} |")
    return lines, regressions


def compare_folders(before: Path, after: Path) -> tuple[list[str], int]:
    """`rag eval --compare A B`: compare the report.json of two report folders (BadInput when one has none)."""
    reports = []
    for folder in (before, after):
        path = folder / "report.json"
        if not path.is_file():
            raise BadInput(f"{path}: no report here (run `rag eval --out {folder}` first)")
        reports.append(json.loads(path.read_text()))
    return compare(*reports)
