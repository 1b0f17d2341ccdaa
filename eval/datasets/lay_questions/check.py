#!/usr/bin/env python3
"""Consistency check for the lay_questions dataset (standard library only).

Exits non-zero if any check fails. Paths can be overridden with the
environment variables PUBMEDQA_CORPUS, SCIFACT_CORPUS and ANSWER_PAIRS_HELDOUT.
"""

import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PUBMEDQA = os.environ.get("PUBMEDQA_CORPUS", os.path.join(HERE, "..", "pubmedqa", "corpus.jsonl"))
SCIFACT = os.environ.get("SCIFACT_CORPUS", "/work/shared/datasets/scifact/corpus.jsonl")
AP_HELDOUT = os.environ.get("ANSWER_PAIRS_HELDOUT", os.path.join(HERE, "..", "answer_pairs", "heldout.jsonl"))

# Abstracts looked at while walking the hash-sorted lists but not used (see README).
SKIPPED_PUBMED = ["pubmed:26778755", "pubmed:16776337", "pubmed:24298614"]
SKIPPED_SCIFACT = [
    "scifact:39929509",
    "scifact:7912",
    "scifact:3845894",
    "scifact:27134931",
    "scifact:22997657",
    "scifact:21330280",
    "scifact:11288846",
    "scifact:35087728",
    "scifact:12922760",
    "scifact:30152134",
    "scifact:4452318",
    "scifact:23117378",
    "scifact:4421787",
    "scifact:14225271",
    "scifact:8476213",
    "scifact:5094468",
    "scifact:1631583",
    "scifact:46764350",
    "scifact:55040297",
    "scifact:10812605",
    "scifact:2754534",
    "scifact:4932668",
    "scifact:9225850",
    "scifact:14591894",
    "scifact:4362729",
    "scifact:2851611",
    "scifact:2888272",
    "scifact:10743131",
    "scifact:36480032",
    "scifact:12462961",
    "scifact:3866315",
    "scifact:28230867",
    "scifact:2682997",
    "scifact:43752562",
    "scifact:1886551",
    "scifact:8604837",
    "scifact:14767844",
    "scifact:32450297",
]

# Key technical and lay terms (regex, case-insensitive) that must be absent from
# both corpora for each unanswerable question.
UNANSWERABLE_TERMS = {
    "lq-u01": [r"cranberr"],
    "lq-u02": [r"earwax", r"ear wax", r"cerumen"],
    "lq-u03": [r"motion sick", r"seasick", r"sea sick", r"acupressure"],
    "lq-u04": [r"plantar fasci", r"heel pain", r"insole", r"orthotic"],
    "lq-u05": [r"carpal tunnel", r"median nerve"],
    "lq-u06": [r"bunion", r"hallux"],
    "lq-u07": [r"dandruff", r"seborrh", r"ketoconazole"],
    "lq-u08": [r"duct tape", r"verruc"],
    "lq-u09": [r"nosebleed", r"nose bleed", r"epistaxis"],
    "lq-u10": [r"ingrown", r"toenail", r"onychocrypt"],
    "lq-u11": [r"\blice\b", r"pediculosis", r"dimeticone", r"dimethicone"],
    "lq-u12": [r"hangover"],
    "lq-u13": [r"bee sting", r"hymenoptera", r"insect sting"],
    "lq-u14": [r"altitude", r"mountain sickness", r"acetazolamide"],
    "lq-u15": [r"tennis elbow", r"epicondylitis", r"epicondylalgia"],
    "lq-u16": [r"dry eye", r"tear film", r"artificial tears"],
    "lq-u17": [r"enuresis", r"bed-?wetting"],
    "lq-u18": [r"stutter", r"stammer", r"speech therap"],
    "lq-u19": [r"kangaroo", r"skin[- ]to[- ]skin"],
    "lq-u20": [r"rosacea"],
    "lq-u21": [r"shingles"],
    "lq-u22": [r"chewing gum", r"gum chewing"],
    "lq-u23": [r"hiccup", r"hiccough", r"singultus"],
    "lq-u24": [r"snoring", r"snorer", r"mandibular advancement", r"oral appliance"],
    "lq-u25": [r"tinea", r"athlete'?s foot"],
    "lq-u26": [r"cramp", r"quinine"],
    "lq-u27": [r"\bacne\b", r"isotretinoin", r"accutane"],
    "lq-u28": [r"e-cig", r"electronic cigarette", r"vaping"],
    "lq-u29": [r"grommet", r"tympanostomy", r"ventilation tube", r"glue ear"],
    "lq-u30": [r"sauna", r"steam bath"],
}

MAX_SHARED_WORDS = 5  # longest run of consecutive words a question may share with its gold text

errors = []


def fail(msg):
    errors.append(msg)


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


def text_of(d):
    a = d.get("abstract", "")
    return " ".join(a) if isinstance(a, list) else a


def load_corpus(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out[d["doc_id"]] = ((d.get("title") or ""), text_of(d))
    return out


corpus = {}
corpus.update(load_corpus(PUBMEDQA))
corpus.update(load_corpus(SCIFACT))
pool = set()
with open(AP_HELDOUT, encoding="utf-8") as f:
    for line in f:
        pool.add(json.loads(line)["doc_id"])

rows = {}
counts = {}
for name in ("tune.jsonl", "heldout.jsonl"):
    counts[name] = [0, 0]
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except Exception as e:
                fail(f"{name}:{n}: bad JSON ({e})")
                continue
            rid = r.get("id")
            if rid in rows:
                fail(f"duplicate id {rid}")
            rows[rid] = r
            want_held = int(sha(rid), 16) % 2 == 0
            if want_held != (name == "heldout.jsonl"):
                fail(f"{rid}: in {name} but split rule says otherwise")
            counts[name][0 if r.get("answerable") else 1] += 1

expected = [f"lq-{i:03d}" for i in range(1, 81)] + [f"lq-u{i:02d}" for i in range(1, 31)]
if sorted(rows) != sorted(expected):
    fail(f"id set mismatch: missing {sorted(set(expected) - set(rows))}, extra {sorted(set(rows) - set(expected))}")


def words(s):
    return re.findall(r"[a-z0-9]+", s.lower())


def longest_shared_run(q, t):
    qw, tw = words(q), " " + " ".join(words(t)) + " "
    best = 0
    for i in range(len(qw)):
        for j in range(i + best + 1, len(qw) + 1):
            if " " + " ".join(qw[i:j]) + " " in tw:
                best = j - i
            else:
                break
    return best


golds = []
max_run = 0
for rid in expected[:80]:
    r = rows.get(rid)
    if r is None:
        continue
    if set(r) != {"id", "question", "gold", "answerable", "must_contain"}:
        fail(f"{rid}: unexpected keys {sorted(r)}")
    if r.get("answerable") is not True:
        fail(f"{rid}: answerable must be true")
    g = r.get("gold")
    if not (isinstance(g, list) and len(g) == 1):
        fail(f"{rid}: gold must be a one-element list")
        continue
    g = g[0]
    golds.append(g)
    if g not in corpus:
        fail(f"{rid}: gold {g} not in corpora")
        continue
    if g not in pool:
        fail(f"{rid}: gold {g} not in answer_pairs/heldout.jsonl")
    title, abstract = corpus[g]
    q = r["question"]
    ql = q.lower()
    al = abstract.lower()
    mc = r.get("must_contain")
    if not (isinstance(mc, list) and 1 <= len(mc) <= 3):
        fail(f"{rid}: must_contain must have 1-3 entries")
        mc = mc if isinstance(mc, list) else []
    for s in mc:
        alts = [a for a in s.split("|") if a]
        if not any(a.lower() in al for a in alts):
            fail(f"{rid}: none of {alts} occurs in the gold abstract")
        for a in alts:
            if a.lower() in ql:
                fail(f"{rid}: question contains must_contain alternative {a!r}")
    run = longest_shared_run(q, title + " " + abstract)
    max_run = max(max_run, run)
    if run > MAX_SHARED_WORDS:
        fail(f"{rid}: question shares {run} consecutive words with its gold text")

if len(set(golds)) != len(golds):
    fail("some abstract is used by more than one question")

# Selection rule: alternate PubMedQA / SciFact, each walked in sha256 order with documented skips.
pm = sorted([d for d in pool if d.startswith("pubmed:")], key=sha)
sf = sorted([d for d in pool if d.startswith("scifact:")], key=sha)
pm_used = [g for g in golds[0::2]]
sf_used = [g for g in golds[1::2]]
for lst, used, skipped, label in ((pm, pm_used, SKIPPED_PUBMED, "pubmed"), (sf, sf_used, SKIPPED_SCIFACT, "scifact")):
    walked = set(used) | set(skipped)
    if set(used) & set(skipped):
        fail(f"{label}: an id is both used and skipped")
    prefix = lst[: len(walked)]
    if set(prefix) != walked:
        fail(f"{label}: used+skipped ids are not a prefix of the sha256-sorted list")
    if [d for d in prefix if d in set(used)] != used:
        fail(f"{label}: questions are not in walk order")

# Unanswerable questions.
texts = [(k, (t + " " + a)) for k, (t, a) in corpus.items()]
for rid in expected[80:]:
    r = rows.get(rid)
    if r is None:
        continue
    if set(r) != {"id", "question", "gold", "answerable"}:
        fail(f"{rid}: unexpected keys {sorted(r)}")
    if r.get("answerable") is not False or r.get("gold") != []:
        fail(f"{rid}: must have answerable false and empty gold")
    for pat in UNANSWERABLE_TERMS[rid]:
        rx = re.compile(pat, re.I)
        hits = [k for k, t in texts if rx.search(t)]
        if hits:
            fail(f"{rid}: term /{pat}/ occurs in {hits[:5]}")

for name, (a, u) in counts.items():
    print(f"{name}: {a} answerable, {u} unanswerable")
print(f"longest question/gold shared word run: {max_run} (limit {MAX_SHARED_WORDS})")
if errors:
    print(f"FAILED ({len(errors)} problems):")
    for e in errors:
        print("  " + e)
    sys.exit(1)
print("OK: all checks passed")
