"""Relations a record states itself, in DataCite's vocabulary: ``IsDerivedFrom``, and
``IsPartOf`` the experiment whose card it cites (:mod:`eee.governance.experiments`).

The ledger gives the relations between records (:meth:`eee.governance.status.Ledger.relations`:
IsNewVersionOf / IsPreviousVersionOf, IsIdenticalTo). A record converted from a harness
log, or a copy migrated from an older schema version, says what it was derived from in
its own content; this module reads that, so readers show both kinds together.
"""

from __future__ import annotations

from typing import Any

from eee.governance import IS_DERIVED_FROM, IS_PART_OF

# the eval libraries whose logs the store's converters read (tools/convert)
CONVERTED_LIBRARIES = {
    "helm": "HELM",
    "lm_eval": "lm-evaluation-harness",
    "lm-eval": "lm-evaluation-harness",
    "inspect_ai": "Inspect AI",
}
MIGRATED_FROM = "eee_migrated_from"  # eee.migrate.provenance.FROM


def derived_from(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The IsDerivedFrom relations of a record: the evaluation log it was converted from
    (an evaluation run of a known harness, named by its ``evaluation_id``) and the schema
    version it was migrated from."""
    out: list[dict[str, Any]] = []
    source = doc.get("source_metadata") if isinstance(doc.get("source_metadata"), dict) else {}
    library = doc.get("eval_library") if isinstance(doc.get("eval_library"), dict) else {}
    name = library.get("name")
    if source.get("source_type") == "evaluation_run" and isinstance(name, str) and name in CONVERTED_LIBRARIES:
        out.append(
            {
                "relation": IS_DERIVED_FROM,
                "source": f"{CONVERTED_LIBRARIES[name]} log",
                "identifier": doc.get("evaluation_id"),
            }
        )
    details = source.get("additional_details") if isinstance(source.get("additional_details"), dict) else {}
    if isinstance(details.get(MIGRATED_FROM), str):
        out.append(
            {
                "relation": IS_DERIVED_FROM,
                "source": f"the record as written in schema version {details[MIGRATED_FROM]}",
                "identifier": doc.get("evaluation_id"),
            }
        )
    from eee.governance.experiments import ID_RE, cited_card, path_for

    card = cited_card(doc)
    if card is not None and ID_RE.match(card):
        out.append({"relation": IS_PART_OF, "source": "the experiment card it cites", "identifier": path_for(card)})
    return out
