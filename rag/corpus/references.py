"""Papers out to reference managers: BibTeX, RIS and CSL-JSON, each written so that the project's own reader of the
format reads the papers back (BibTeX: `rag.corpus.loaders.load_corpus`; RIS: `rag.corpus.readers.read_ris`;
CSL-JSON: `rag.corpus.readers.read_csl_json`).

What reads back, for a paper whose doc_id is its first id in the readers' order (doi > pmid > arxiv > openalex >
zotero), as the readers make it:
- BibTeX: every doc_id (DOI, PMID, arXiv, OpenAlex, Zotero, text hash, free ids such as "seeds#3"), from the entry's
  `doc_id` field; title, abstract, authors, venue (the `venue` field; `journal` holds it too, for reference
  managers), year, url, keywords. The loader sets no `Paper.doi` nor `identifiers`: the DOI is in the `doi` field
  and in the doc_id, not in `Paper.doi`. The loader drops literal braces (its `clean_latex`), splits authors on
  " and " and ";" and keywords on "," and ";": a title's "{" and "}", a name holding " and " or ";", and a keyword
  holding "," or ";" do not come back as they were.
- RIS: DOI (`DO`) and PMID (`AN` with `DB  - PubMed`) ids, and text-hash ids (the reader hashes the abstract the
  same way); title, abstract, authors, venue (`T2`), year, DOI, http(s) url, keywords. The reader reads no arXiv,
  OpenAlex or Zotero id and no free id (not `ID`, not `N1`): such a paper reads back with the text-hash id of its
  abstract. `ID` still holds the doc_id, for reference managers.
- CSL-JSON: DOI (`DOI`), PMID (`PMID`), arXiv (a "arXiv: <id>" line of `note`, as Zotero writes it), Zotero and
  text-hash ids; title, abstract, authors, venue (`container-title`), year, DOI, http(s) url, keywords. `id` is the
  doc_id, except for a paper whose doc_id is its Zotero key: the reader takes a key only from Zotero's item URI in
  `id` ("http://zotero.org/users/local/library/items/KEY", or .../groups/ID/items/KEY when the paper's link is to a
  group), so that is its `id`. The reader reads no OpenAlex id and no free id: such a paper reads back with the
  text-hash id of its abstract.

Text goes out on one line with single spaces (the readers read it so). Only http(s) links are written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from rag.errors import BadInput
from rag.records import Paper

__all__ = ["FORMATS", "export", "to_bibtex", "to_csl_items", "to_csl_json", "to_ris"]

ID_KINDS = ("doi", "pmid", "arxiv", "openalex", "zotero")  # the prefixed ids, in the readers' order


def export(papers: Iterable[Paper], kind: str) -> str:
    """The papers as a reference file of `kind` (a key of FORMATS); BadInput naming the kinds for another."""
    if kind not in FORMATS:
        raise BadInput(f"unknown reference format {kind!r}; use one of {', '.join(FORMATS)}")
    return FORMATS[kind][0](papers)


# ---- what every format needs from a paper


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _ids(paper: Paper) -> dict[str, str]:
    """The paper's ids by kind (bare: {"doi": "10.1/x", "pmid": "123"}), from its doc_id, identifiers and doi."""
    found: dict[str, str] = {}
    for name in (paper.doc_id, *paper.identifiers):
        kind, colon, value = name.partition(":")
        if colon and kind in ID_KINDS and value.strip():
            found.setdefault(kind, value.strip())
    if paper.doi:
        found["doi"] = paper.doi
    return found


def _web_url(paper: Paper) -> str | None:
    """The paper's link when it is http(s): a javascript: or zotero: link goes to no reference manager."""
    url = _one_line(paper.url)
    return url if re.match(r"https?://", url, re.IGNORECASE) else None


def _split_name(name: str) -> tuple[str, str] | None:
    """("Family", "Given") of "Family, Given"; None for a literal name (an organisation, a name in one piece)."""
    family, comma, given = name.partition(",")
    return (family.strip(), given.strip()) if comma and family.strip() else None


# ---- BibTeX

# LaTeX's special characters, written so that LaTeX prints them and pylatexenc (the loader's LatexDecodingMiddleware)
# decodes them back to themselves. "\string^" because pylatexenc reads "\textasciicircum" as U+02C6, not "^".
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\string^",
}
_SPECIAL = re.compile("[" + re.escape("".join(_LATEX_SPECIALS)) + "]")
# TeX ligatures pylatexenc reads too ("--" as an en dash, "``" and "''" as quotes, "?`" and "!`" as inverted marks):
# an empty group between the two characters keeps them apart (the loader drops the braces).
_LIGATURE = re.compile(r"([-`'])(?=\1)|([?!])(?=`)")
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_:./+-]")


def _latex(text: str) -> str:
    """Text on one line, LaTeX-safe, non-ASCII kept as UTF-8."""
    escaped = _SPECIAL.sub(lambda m: _LATEX_SPECIALS[m[0]], _one_line(text))
    return _LIGATURE.sub(lambda m: (m[1] or m[2]) + "{}", escaped)


def to_bibtex(papers: Iterable[Paper]) -> str:
    """@article entries (@misc for a paper without a venue), keyed by the doc_id made key-safe and unique, each with
    a `doc_id` field holding the doc_id itself."""
    keys: set[str] = set()
    return "\n".join(_bibtex_entry(paper, _unique_key(paper.doc_id, keys)) for paper in papers)


def _unique_key(doc_id: str, taken: set[str]) -> str:
    """A citation key bibtexparser and BibTeX accept, not yet in `taken` (a duplicate key is a failed block)."""
    base = _KEY_UNSAFE.sub("_", doc_id) or "paper"
    key, n = base, 1
    while key.lower() in taken:  # BibTeX keys are case-insensitive
        n += 1
        key = f"{base}-{n}"
    taken.add(key.lower())
    return key


def _bibtex_entry(paper: Paper, key: str) -> str:
    fields = _bibtex_fields(paper)
    body = "".join(f"  {name} = {{{value}}},\n" for name, value in fields.items() if value)
    return f"@{'article' if paper.venue else 'misc'}{{{key},\n{body}}}\n"


def _bibtex_fields(paper: Paper) -> dict[str, str]:
    """The fields, escaped, in the order they are written (empty ones are left out)."""
    ids = _ids(paper)
    venue = _latex(paper.venue or "")
    return {
        "author": " and ".join(_bibtex_name(name) for name in paper.authors if _one_line(name)),
        "title": _latex(paper.title or ""),
        "journal": venue,
        "venue": venue,  # the field the project's loader reads
        "year": str(paper.year) if paper.year is not None else "",
        "doi": _latex(ids.get("doi", "")),
        "pmid": _latex(ids.get("pmid", "")),
        "eprint": _latex(ids.get("arxiv", "")),
        "archiveprefix": "arXiv" if "arxiv" in ids else "",
        "url": _latex(_web_url(paper) or ""),
        "keywords": _latex(", ".join(paper.keywords)),
        "abstract": _latex(paper.abstract),
        "doc_id": _latex(paper.doc_id),
    }


def _bibtex_name(name: str) -> str:
    """ "Family, Given" as it is; a literal name braced, so that BibTeX does not split it into given and family."""
    escaped = _latex(name)
    return escaped if _split_name(name) else f"{{{escaped}}}"


# ---- RIS


def to_ris(papers: Iterable[Paper]) -> str:
    """TY JOUR entries, "TAG  - value" lines (LF line endings), a blank line between entries."""
    return "\n".join(_ris_entry(paper) for paper in papers)


def _ris_entry(paper: Paper) -> str:
    lines = [f"{tag}  - {value}" for tag, value in _ris_fields(paper) if value]
    return "\n".join(["TY  - JOUR", *lines, "ER  - "]) + "\n"


def _ris_fields(paper: Paper) -> list[tuple[str, str]]:
    """(tag, value) pairs in the order they are written; values on one line."""
    ids = _ids(paper)
    return [
        ("ID", _one_line(paper.doc_id)),
        ("TI", _one_line(paper.title)),
        *(("AU", _one_line(name)) for name in paper.authors),
        ("PY", str(paper.year) if paper.year is not None else ""),
        ("T2", _one_line(paper.venue)),
        ("DO", ids.get("doi", "")),
        ("DB", "PubMed" if "pmid" in ids else ""),  # the reader takes AN as a PMID only from PubMed
        ("AN", ids.get("pmid", "")),
        ("UR", _web_url(paper) or ""),
        *(("KW", _one_line(keyword)) for keyword in paper.keywords),
        ("AB", _one_line(paper.abstract)),
    ]


# ---- CSL-JSON

_ZOTERO_KEY = re.compile(r"[A-Z0-9]{8}")
_ZOTERO_GROUP_LINK = re.compile(r"zotero://select/groups/([^/]+)/items/([A-Z0-9]{8})")


def to_csl_json(papers: Iterable[Paper]) -> str:
    """A JSON array of CSL items (UTF-8 text, non-ASCII as is, indented)."""
    return json.dumps(to_csl_items(papers), ensure_ascii=False, indent=2) + "\n"


def to_csl_items(papers: Iterable[Paper]) -> list[dict[str, Any]]:
    """The CSL-JSON items as dicts (type "article-journal"); fields a paper lacks are left out."""
    return [_csl_item(paper) for paper in papers]


def _csl_item(paper: Paper) -> dict[str, Any]:
    ids = _ids(paper)
    item: dict[str, Any] = {"id": _csl_id(paper, ids), "type": "article-journal"}
    optional: dict[str, Any] = {
        "title": _one_line(paper.title),
        "author": [_csl_name(name) for name in paper.authors if _one_line(name)],
        "issued": {"date-parts": [[paper.year]]} if paper.year is not None else None,
        "container-title": _one_line(paper.venue),
        "DOI": ids.get("doi"),
        "PMID": ids.get("pmid"),
        "URL": _web_url(paper),
        "keyword": ", ".join(_one_line(k) for k in paper.keywords if _one_line(k)),
        "note": f"arXiv: {ids['arxiv']}" if "arxiv" in ids else None,  # where Zotero keeps an arXiv id
        "abstract": _one_line(paper.abstract),
    }
    item.update((name, value) for name, value in optional.items() if value)
    return item


def _csl_id(paper: Paper, ids: dict[str, str]) -> str:
    """The doc_id; Zotero's item URI for a paper whose doc_id is its Zotero key (the reader reads the key there)."""
    key = ids.get("zotero", "")
    if paper.doc_id != f"zotero:{key}" or not _ZOTERO_KEY.fullmatch(key):
        return paper.doc_id
    group = _ZOTERO_GROUP_LINK.fullmatch(_one_line(paper.url))
    if group and group[2] == key:
        return f"http://zotero.org/groups/{group[1]}/items/{key}"
    return f"http://zotero.org/users/local/library/items/{key}"


def _csl_name(name: str) -> dict[str, str]:
    parts = _split_name(name)
    if parts is None:
        return {"literal": _one_line(name)}
    family, given = parts
    return {"family": _one_line(family), "given": _one_line(given)} if given else {"family": _one_line(family)}


Writer = Callable[[Iterable[Paper]], str]
FORMATS: dict[str, tuple[Writer, str]] = {
    "bibtex": (to_bibtex, ".bib"),
    "ris": (to_ris, ".ris"),
    "csl-json": (to_csl_json, ".json"),
}
