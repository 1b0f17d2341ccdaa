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

# ---- Round 2 (lq-081..lq-160, lq-u31..lq-u60) ----
# The walk continues where round 1 stopped. PubMedQA: the 9 remaining ids were all usable (no skips).
SKIPPED_PUBMED_R2 = []
SKIPPED_SCIFACT_R2 = [
    "scifact:87337034",  # not biomedical: plant male-sterility vector
    "scifact:18038955",  # molecular/cell mechanism only
    "scifact:41982985",  # molecular/cell mechanism only
    "scifact:90756514",  # review/background/methods only
    "scifact:43156471",  # molecular/cell mechanism only
    "scifact:10846815",  # molecular/cell mechanism only
    "scifact:14972169",  # molecular/cell mechanism only
    "scifact:23076291",  # molecular/cell mechanism only
    "scifact:13592721",  # not biomedical: synthetic gene-network engineering
    "scifact:3052213",  # molecular/cell mechanism only
    "scifact:154549459",  # not biomedical: urban land market
    "scifact:32638085",  # review/background/methods only
    "scifact:16398049",  # review/background/methods only
    "scifact:4363526",  # molecular/cell mechanism only
    "scifact:195683603",  # molecular/cell mechanism only
    "scifact:35062452",  # molecular/cell mechanism only
    "scifact:2824347",  # review/background/methods only
    "scifact:12804937",  # review/background/methods only
    "scifact:4313478",  # molecular/cell mechanism only
    "scifact:3765739",  # molecular/cell mechanism only
    "scifact:3788528",  # molecular/cell mechanism only
    "scifact:2919030",  # molecular/cell mechanism only
    "scifact:3095620",  # molecular/cell mechanism only
    "scifact:24523573",  # molecular/cell mechanism only
    "scifact:39225849",  # molecular/cell mechanism only
    "scifact:600808",  # molecular/cell mechanism only
    "scifact:21272977",  # review/background/methods only
    "scifact:15816729",  # molecular/cell mechanism only
    "scifact:34905328",  # molecular/cell mechanism only
    "scifact:18654430",  # review/background/methods only
    "scifact:11884867",  # review/background/methods only
    "scifact:4423327",  # molecular/cell mechanism only
    "scifact:16644043",  # molecular/cell mechanism only
    "scifact:7281161",  # molecular/cell mechanism only
    "scifact:25062868",  # molecular/cell mechanism only
    "scifact:121001457",  # not biomedical: solar cells
    "scifact:4828984",  # molecular/cell mechanism only
    "scifact:6670101",  # review/background/methods only
    "scifact:3085264",  # molecular/cell mechanism only
    "scifact:9539753",  # molecular/cell mechanism only
    "scifact:23117928",  # not biomedical: archaeal virus CRISPR
    "scifact:19419439",  # review/background/methods only
    "scifact:21626639",  # molecular/cell mechanism only
    "scifact:25052749",  # review/background/methods only
    "scifact:24318630",  # review/background/methods only
    "scifact:29467201",  # not biomedical: insect steroid enzyme
    "scifact:23727313",  # molecular/cell mechanism only
    "scifact:28468276",  # review/background/methods only
    "scifact:40447899",  # review/background/methods only
    "scifact:25838286",  # molecular/cell mechanism only
    "scifact:42240424",  # molecular/cell mechanism only
    "scifact:26083387",  # molecular/cell mechanism only
    "scifact:14934137",  # molecular/cell mechanism only
    "scifact:14337960",  # review/background/methods only
    "scifact:14719322",  # molecular/cell mechanism only
    "scifact:4942718",  # not biomedical: bacterial sporulation screen
    "scifact:13651792",  # molecular/cell mechanism only
    "scifact:18568804",  # review/background/methods only
    "scifact:13907427",  # molecular/cell mechanism only
    "scifact:1727042",  # molecular/cell mechanism only
    "scifact:72159",  # molecular/cell mechanism only
    "scifact:6123924",  # molecular/cell mechanism only
    "scifact:14145440",  # molecular/cell mechanism only
    "scifact:1914588",  # molecular/cell mechanism only
    "scifact:3441524",  # molecular/cell mechanism only
    "scifact:2828460",  # molecular/cell mechanism only
    "scifact:3112885",  # review/background/methods only
    "scifact:29381091",  # molecular/cell mechanism only
    "scifact:21676556",  # molecular/cell mechanism only
    "scifact:26030079",  # molecular/cell mechanism only
    "scifact:17447653",  # review/background/methods only
    "scifact:41710132",  # molecular/cell mechanism only
    "scifact:21884059",  # review/background/methods only
    "scifact:2853291",  # molecular/cell mechanism only
    "scifact:22874817",  # molecular/cell mechanism only
    "scifact:4254064",  # molecular/cell mechanism only
    "scifact:12705056",  # review/background/methods only
    "scifact:6148876",  # molecular/cell mechanism only
    "scifact:1569031",  # molecular/cell mechanism only
    "scifact:3230557",  # review/background/methods only
    "scifact:27061085",  # review/background/methods only
    "scifact:13277039",  # molecular/cell mechanism only
    "scifact:30208015",  # molecular/cell mechanism only
    "scifact:16461149",  # review/background/methods only
    "scifact:123859",  # review/background/methods only
    "scifact:40323148",  # review/background/methods only
    "scifact:5927534",  # molecular/cell mechanism only
    "scifact:17911973",  # molecular/cell mechanism only
    "scifact:34735369",  # review/background/methods only
    "scifact:7416873",  # molecular/cell mechanism only
    "scifact:9076196",  # molecular/cell mechanism only
    "scifact:15600979",  # molecular/cell mechanism only
    "scifact:32328114",  # review/background/methods only
    "scifact:25670099",  # not biomedical: fly embryo nuclear cycles
    "scifact:1701063",  # molecular/cell mechanism only
    "scifact:6565037",  # molecular/cell mechanism only
    "scifact:20363389",  # molecular/cell mechanism only
    "scifact:25068298",  # molecular/cell mechanism only
    "scifact:28138927",  # molecular/cell mechanism only
    "scifact:10937190",  # not biomedical: worm embryo epidermis
    "scifact:2904102",  # molecular/cell mechanism only
    "scifact:20420780",  # molecular/cell mechanism only
    "scifact:99829811",  # review/background/methods only
    "scifact:23388442",  # review/background/methods only
    "scifact:8208212",  # molecular/cell mechanism only
    "scifact:9478135",  # molecular/cell mechanism only
    "scifact:45414636",  # molecular/cell mechanism only
    "scifact:6729465",  # review/background/methods only
    "scifact:120626",  # review/background/methods only
    "scifact:13322804",  # review/background/methods only
    "scifact:19922508",  # review/background/methods only
]

UNANSWERABLE_TERMS_R2 = {
    "lq-u31": ["teething", "amber necklace", "teething gel", "benzocaine"],
    "lq-u32": ["nappy rash", "diaper", "barrier cream"],
    "lq-u33": ["pinworm", "threadworm", "enterobius", "mebendazole"],
    "lq-u34": ["ankle sprain", "sprained ankle", "ankle brace", "ankle support"],
    "lq-u35": ["flat feet", "flat ?foot", "pes planus", "fallen arch"],
    "lq-u36": ["hyperhidrosis", "antiperspirant", "aluminium chloride|aluminum chloride", "excessive sweating"],
    "lq-u37": ["cellulite"],
    "lq-u38": ["stretch mark", "striae", "cocoa butter"],
    "lq-u39": ["chilblain", "pernio"],
    "lq-u40": ["swimmer'?s ear", "otitis externa", "ear drops"],
    "lq-u41": ["morning sickness", "hyperemesis", "nausea (and vomiting )?(of|in|during) pregnancy"],
    "lq-u42": ["onychomycosis", "nail fung", "fungal nail", "terbinafine"],
    "lq-u43": ["scabies", "sarcoptes", "ivermectin"],
    "lq-u44": ["presbyopia", "reading glasses", "near vision"],
    "lq-u45": ["raynaud", "white fingers"],
    "lq-u46": ["thumb[- ]?sucking", "digit sucking"],
    "lq-u47": ["piercing", "earring"],
    "lq-u48": [
        "teeth whitening|tooth whitening",
        "whitening strip",
        "tooth bleaching|teeth bleaching",
        "carbamide peroxide",
    ],
    "lq-u49": ["travell?er'?s'? diarrh", "loperamide", "bismuth"],
    "lq-u50": ["brain freeze", "ice[- ]cream headache", "cold[- ]stimulus headache"],
    "lq-u51": ["knuckle[- ]crack|crack(ing)? (your |the |their )?knuckles", "\\bknuckles\\b"],
    "lq-u52": ["eye ?strain", "asthenopia", "computer vision syndrome", "20-20-20"],
    "lq-u53": ["bed ?bugs?", "cimex"],
    "lq-u54": ["poison ivy", "poison oak", "urushiol"],
    "lq-u55": ["contact lens", "keratitis"],
    "lq-u56": ["hammer ?toe", "claw toe"],
    "lq-u57": ["\\bstyes?\\b", "hordeolum"],
    "lq-u58": ["sun ?burn", "after-sun"],
    "lq-u59": ["toothbrush", "tooth ?brushing", "dental plaque"],
    "lq-u60": ["nail[- ]biting", "onychophagia"],
}
UNANSWERABLE_TERMS.update(UNANSWERABLE_TERMS_R2)

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


def round_of(rid):
    m = re.fullmatch(r"lq-(u?)(\d+)", rid or "")
    if not m:
        return None
    n = int(m.group(2))
    if m.group(1):
        return 1 if n <= 30 else 2
    return 1 if n <= 80 else 2


def id_key(rid):
    # file order: round 1 (answerable, then unanswerable), then round 2 likewise
    m = re.fullmatch(r"lq-(u?)(\d+)", rid or "")
    if not m:
        return (9, 9, 0)
    return (round_of(rid), 1 if m.group(1) else 0, int(m.group(2)))


rows = {}
counts = {}
counts_round = {(n, k): [0, 0] for n in ("tune.jsonl", "heldout.jsonl") for k in (1, 2)}
order = {"tune.jsonl": [], "heldout.jsonl": []}
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
            rnd = round_of(rid)
            if rnd:
                counts_round[(name, rnd)][0 if r.get("answerable") else 1] += 1
            order[name].append(rid)

R1_ANS = [f"lq-{i:03d}" for i in range(1, 81)]
R1_UNANS = [f"lq-u{i:02d}" for i in range(1, 31)]
R2_ANS = [f"lq-{i:03d}" for i in range(81, 161)]
R2_UNANS = [f"lq-u{i:02d}" for i in range(31, 61)]
ANSWERABLE = R1_ANS + R2_ANS
UNANSWERABLE = R1_UNANS + R2_UNANS
expected = ANSWERABLE + UNANSWERABLE
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


for name, ids in order.items():
    if ids != sorted(ids, key=id_key):
        fail(f"{name}: records are not in id order (round 1 lines first, then round 2)")

golds = []
gold_of = {}
max_run = 0
for rid in ANSWERABLE:
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
    gold_of[rid] = g
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

# Selection rule: each source is walked in sha256 order with documented skips.
# Round 1 alternates PubMedQA / SciFact (odd ids PubMedQA). Round 2 continues both walks where round 1
# stopped: it alternates (PubMedQA first) while PubMedQA abstracts remain, then takes SciFact only.
# Used plus skipped ids of round 1, then of round 2, must together form a prefix of each list.
pm = sorted([d for d in pool if d.startswith("pubmed:")], key=sha)
sf = sorted([d for d in pool if d.startswith("scifact:")], key=sha)
r1 = [gold_of.get(rid) for rid in R1_ANS]
r2 = [gold_of.get(rid) for rid in R2_ANS]
for rid, g in zip(R1_ANS, r1, strict=True):
    want = "pubmed:" if int(rid[3:]) % 2 == 1 else "scifact:"
    if g and not g.startswith(want):
        fail(f"{rid}: round 1 expects a {want} abstract")
r2_src = ["pubmed" if (g or "").startswith("pubmed:") else "scifact" for g in r2]
n_pm2 = r2_src.count("pubmed")
want_src = []
a, b = n_pm2, len(r2) - n_pm2
while a or b:
    if a:
        want_src.append("pubmed")
        a -= 1
    if b:
        want_src.append("scifact")
        b -= 1
if r2_src != want_src:
    fail("round 2: sources do not alternate PubMedQA/SciFact while PubMedQA lasts, then SciFact only")
for lst, prefix_label, skipped1, skipped2 in (
    (pm, "pubmed", SKIPPED_PUBMED, SKIPPED_PUBMED_R2),
    (sf, "scifact", SKIPPED_SCIFACT, SKIPPED_SCIFACT_R2),
):
    used1 = [g for g in r1 if g and g.startswith(prefix_label + ":")]
    used2 = [g for g in r2 if g and g.startswith(prefix_label + ":")]
    walked1 = set(used1) | set(skipped1)
    walked2 = set(used2) | set(skipped2)
    if (set(used1) | set(used2)) & (set(skipped1) | set(skipped2)):
        fail(f"{prefix_label}: an id is both used and skipped")
    if walked1 & walked2:
        fail(f"{prefix_label}: an id is walked in both rounds")
    if len(set(skipped1)) != len(skipped1) or len(set(skipped2)) != len(skipped2):
        fail(f"{prefix_label}: duplicate skipped id")
    n1 = len(walked1)
    if set(lst[:n1]) != walked1:
        fail(f"{prefix_label}: round 1 used+skipped ids are not a prefix of the sha256-sorted list")
    if set(lst[n1 : n1 + len(walked2)]) != walked2:
        fail(f"{prefix_label}: round 2 used+skipped ids do not continue the walk right after round 1")
    if [d for d in lst[:n1] if d in set(used1)] != used1:
        fail(f"{prefix_label}: round 1 questions are not in walk order")
    if [d for d in lst[n1 : n1 + len(walked2)] if d in set(used2)] != used2:
        fail(f"{prefix_label}: round 2 questions are not in walk order")
    if [d for d in lst[n1 : n1 + len(walked2)] if d in set(skipped2)] != list(skipped2):
        fail(f"{prefix_label}: round 2 skipped ids are not listed in walk order")
    if prefix_label == "pubmed" and n1 + len(walked2) != len(lst):
        fail("pubmed: round 2 must walk every remaining PubMedQA abstract")

# Unanswerable questions.
texts = [(k, (t + " " + a)) for k, (t, a) in corpus.items()]
for rid in UNANSWERABLE:
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
    r1a, r1u = counts_round[(name, 1)]
    r2a, r2u = counts_round[(name, 2)]
    print(f"{name}: {a} answerable, {u} unanswerable (round 1: {r1a}/{r1u}, round 2: {r2a}/{r2u})")
print(f"longest question/gold shared word run: {max_run} (limit {MAX_SHARED_WORDS})")
if errors:
    print(f"FAILED ({len(errors)} problems):")
    for e in errors:
        print("  " + e)
    sys.exit(1)
print("OK: all checks passed")
