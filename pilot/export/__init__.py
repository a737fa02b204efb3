"""Exports of a result list or a library, in the formats reference managers and scripts read.

- :mod:`pilot.export.bibtex` — BibTeX (bibtexparser), with stable ASCII keys shared by every format;
- :mod:`pilot.export.references` — CSL-JSON, RIS (rispy) and one formatted APA citation (citeproc-py);
- :mod:`pilot.publication` — where a paper appeared, named in full (``pilot/data/lexicon.json``, a venue's ``export``);
- :mod:`pilot.export.files` — CSV and the workflow JSON recipe (which loads back to re-run).
"""

from pilot.export.bibtex import base_key, bibtex_entry, bibtex_fields, bibtex_keys, latex_escape, to_bibtex
from pilot.export.files import CSV_COLUMNS, RecipeError, export_targets, load_recipe, to_csv, workflow_recipe
from pilot.export.references import citation, csl_item, ris_record, split_name, to_csljson, to_ris
from pilot.publication import Publication, publication

__all__ = [
    "CSV_COLUMNS", "Publication", "RecipeError", "base_key", "bibtex_entry", "bibtex_fields", "bibtex_keys",
    "citation", "csl_item", "export_targets", "latex_escape", "load_recipe", "publication", "ris_record",
    "split_name", "to_bibtex", "to_csljson", "to_csv", "to_ris", "workflow_recipe",
]  # fmt: skip
