"""The rule registry: every check the store can report, declared once.

Each :class:`Rule` has an id (what a finding's ``check`` says, what the text output shows
as ``[id]``, what a ``flag`` event's ``rule`` names), a severity, a one-line summary, the
usual hint, whether a flag may accept a finding of it, the words people use for it (they
feed the did-you-mean of ``eee flag --rule`` and ``eee rules``, and are never ids
themselves), and the text ``eee rules ID`` explains it with: what it means, why it exists,
and how a finding of it is settled.

Ids are for ever: flag events written years ago name them. An id is never removed or
given another meaning; a test holds every id of the store's committed events registered.

Plain data: the hooks import this module (no dataclasses, no heavy imports).
"""

from __future__ import annotations

from typing import NamedTuple


class Rule(NamedTuple):
    id: str
    severity: str  # "error" or "warning": what a finding of it usually is (see ``means``)
    kind: str  # what it is about: record, sidecar, store, commit, push, ledger, import, tool
    summary: str  # one line
    hint: str  # how to fix a finding, in general
    flaggable: bool  # whether a flag event may accept a finding of it
    words: tuple[str, ...]  # what people call it (the did-you-mean's vocabulary)
    means: str  # what a finding of it means
    why: str  # why the rule exists
    settle: str  # how a finding of it is settled


_FLAG = (
    "a maintainer who accepts the record as it is flags it: "
    "`eee flag <uuid> --rule {id} --json-path PATH --reason ... --commit`"
)
_COMMITTED = (
    "Once the record is committed, `eee audit` and `eee validate` print the exact command that settles a "
    "finding (uuids and JSON path filled in); a record that no longer counts (retracted, superseded, marked a "
    "duplicate) has its warnings settled, judged against the ledger at the head"
)
_NEVER = "It is never flagged: the file has to be fixed (or left out) before it is committed"

RULES: tuple[Rule, ...] = (
    # --- a record's content -------------------------------------------------------------------
    Rule(
        "json",
        "error",
        "record",
        "not strict JSON: unparsable, a duplicate key, NaN or Infinity, not an object",
        "write the record as one strict JSON object (a serializer writes it right)",
        False,
        ("syntax", "parse", "not-json", "duplicate-key", "nan"),
        "The file (a record, or a row of a sidecar) is not strict JSON: it does not parse, it repeats a key "
        "in one object, it holds the tokens NaN or Infinity, it is not UTF-8, or it is not a JSON object.",
        "Readers parse records with many libraries; what one accepts (a duplicate key, NaN) another "
        "refuses or reads differently. Only strict JSON reads the same everywhere.",
        "Rewrite the file with a JSON serializer. " + _NEVER + ".",
    ),
    Rule(
        "version",
        "error",
        "record",
        "no schema_version, or one the store does not know",
        "set schema_version to the version the record was written for",
        False,
        ("schema_version", "unknown-version"),
        "The record declares no schema_version, or a version the schema registry does not hold "
        "(schemas/registry.json).",
        "A record is validated under the schema of the version it declares; without a known version "
        "nothing can be checked, so an unknown version is an error, never a pass.",
        "Set schema_version to a released version (`eee migrate` writes copies under the current one). " + _NEVER + ".",
    ),
    Rule(
        "schema",
        "error",
        "record",
        "invalid under the JSON Schema of the version the document declares",
        "fix the field the message names (a misspelt field is named with the right one)",
        False,
        ("validation", "invalid", "jsonschema", "required"),
        "The document breaks the JSON Schema of its declared version: a required field is missing, a "
        "value has the wrong type or is not allowed, a closed object has an unknown key.",
        "The schema files are the single source of truth of what a record (or a sidecar row) is; every "
        "reader relies on them.",
        "Fix the document (the hint names the field); a record already committed is superseded by a "
        "corrected one. " + _NEVER + ".",
    ),
    Rule(
        "near-miss",
        "warning",
        "record",
        "an unknown field that looks like a misspelt declared one",
        "rename the field to the one the schema declares (before the commit; once committed: flag or supersede)",
        True,
        ("misspelling", "misspelt", "typo", "unknown-field", "near-misses"),
        "An object that lets other keys through holds a key within a small edit distance of a field the "
        "schema declares there (e.g. inference_platfrom): it passes validation, but no reader finds it.",
        "A misspelt optional field is silently lost to every reader.",
        "Rename the field before committing; a committed record keeps it (records never change): supersede "
        "it with a corrected one (`eee supersede <uuid> corrected.json --reason ... --commit`), or "
        + _FLAG.format(id="near-miss")
        + ". "
        + _COMMITTED
        + ".",
    ),
    Rule(
        "score",
        "error",
        "record",
        "a score outside its metric's declared bounds, not finite, or bounds that contradict each other",
        "fix the score or the declared bounds (min_score, max_score)",
        True,
        ("bounds", "range", "out-of-range", "min_score", "max_score", "out-of-bounds"),
        "A result's score lies outside [min_score, max_score] of its metric, is not a finite number, or the "
        "metric declares min_score above max_score, or a continuous metric has a null bound.",
        "A score that its own metric says cannot happen is either a conversion error (a percentage on a 0-1 "
        "scale) or a convention (HELM's -1 for a missing value) that readers must not average in.",
        "Fix the score or the bounds before committing; a committed record is superseded by a corrected "
        "one, or, when the score is what the source says, " + _FLAG.format(id="score") + ".",
    ),
    Rule(
        "results",
        "error",
        "record",
        "two results of one record share an evaluation_result_id",
        "give each result its own evaluation_result_id",
        True,
        ("evaluation_result_id", "result-id", "duplicate-result"),
        "Two entries of evaluation_results carry the same evaluation_result_id.",
        "Sidecar rows name the result they belong to by this id; two results with one id make the rows ambiguous.",
        "Give each result its own id before committing; a committed record is superseded, or "
        + _FLAG.format(id="results")
        + ".",
    ),
    Rule(
        "naming",
        "warning",
        "record",
        "the <developer>/<model> folders do not come from model_info.id (an error at the gate)",
        "write model_info.id as developer/model and place the record in the folders it gives",
        True,
        ("model-id", "model_info.id", "folders", "developer", "name"),
        "The record's <developer>/<model> folders are not the ones its model_info.id gives, or model_info.id "
        "has no developer part. The validator warns; the gate refuses a record being added. (Before the rule "
        "registry the gate also reported path layout problems under this id; they are `layout` now.)",
        "Readers and the catalogue find a model's records by their folders, which are always taken from "
        "model_info.id the same way.",
        "Before the commit, move the record to the folders the hint names, or fix model_info.id. A committed "
        "record never moves: it is superseded by a copy, which `eee supersede <uuid> <the record's file> "
        "--reason ... --commit` places in the folders of its model_info.id; for an imported record whose id "
        "is what the source says, " + _FLAG.format(id="naming") + ". " + _COMMITTED + ".",
    ),
    Rule(
        "benchmark",
        "warning",
        "record",
        "the benchmark folder matches none of the record's benchmark names",
        "place the record under the folder of its benchmark (before the commit), or register the folder's names as aliases",
        True,
        ("benchmark-folder", "folder", "dataset", "dataset_name"),
        "The record's first folder under data/ is not a name of any benchmark the record's results name "
        "(source_data.dataset_name, evaluation_name), nor one of their aliases in the identity registry "
        "(governance/identity/benchmarks.yaml), even with a registered folder prefix (hal-) left out.",
        "The catalogue lists records by benchmark folder; a record in the wrong one is missed by whoever "
        "looks for its benchmark.",
        "Move the record before it is committed, or add the folder to the aliases. A committed record never "
        "moves: it is superseded by a copy under the right folder (`eee supersede <uuid> <the record's file> "
        "--benchmark FOLDER --reason ... --commit`), or " + _FLAG.format(id="benchmark") + ". " + _COMMITTED + ".",
    ),
    Rule(
        "identity",
        "warning",
        "record",
        "a developer, model, benchmark or metric id that is not canonical: an alias, or one by case, punctuation or a near miss",
        "write the canonical id the message names, or settle the spelling in the identity registry",
        True,
        ("alias", "aliases", "canonical", "spelling", "rename", "identity-alias"),
        "The record's developer (the developer part of model_info.id), model (model_info.id), benchmark (its "
        "folder) or a metric_id is not a canonical id of the identity registry (governance/identity/) but an "
        "alias of one, added after the alias was made, or the same as one but for letter case, punctuation or "
        "one letter (a near miss).",
        "One developer under two folder names is two developers to every query and analysis: names are data, "
        "and the registry says which spelling stands for which thing, so readers group by one id.",
        "Before the commit, write the canonical id. Once committed, a maintainer settles the spelling: `eee "
        "identity alias OLD --to CANONICAL --kind KIND --commit` makes it an alias and settles the records "
        "already under it (records added under it later are warned), `eee identity canonical NAME --kind KIND "
        "--commit` declares it another thing; or " + _FLAG.format(id="identity") + ". " + _COMMITTED + ".",
    ),
    Rule(
        "duplicates",
        "warning",
        "record",
        "the record repeats another one: the same evaluation, or identical content",
        "leave the copy out, supersede the other record, or mark it a duplicate",
        True,
        ("duplicate", "dup", "same-evaluation", "identical"),
        "Another record of the store (or of the same commit) shares a result with this one (same model, "
        "benchmark, metric, configuration, eval library and evaluation_id), or has the same content apart "
        "from evaluation_id and retrieved_timestamp.",
        "A result counted twice skews every aggregate; a re-run must say it is one (its own evaluation_id).",
        "Leave the copy out before the commit. Once both are committed, a maintainer supersedes the other "
        "record with this one (a correction: `eee supersede <other> <uuid> --reason ... --commit`) or marks "
        "this one a duplicate of the one that stands (`eee mark-duplicate <uuid> --of <other> --reason ... "
        "--commit`); retracting either also settles it (the pair no longer counts twice); an imported pair is "
        "flagged: " + _FLAG.format(id="duplicates") + ". " + _COMMITTED + ".",
    ),
    # --- a record's sidecar ---------------------------------------------------------------------
    Rule(
        "sidecar",
        "error",
        "sidecar",
        "a sidecar, its DVC pointer or the record's declaration of it do not agree",
        "re-create the sidecar with `eee samples add`, or fix what the record declares about it",
        False,
        ("instances", "per-sample", "pointer", "dvc-pointer", "checksum", "total_rows"),
        "A per-sample sidecar or its DVC pointer breaks the pairing with its record: the record declares a "
        "sidecar that is absent, a sidecar or pointer has no record, the checksum or row count disagree, a "
        "row is invalid or names an unknown result, a pointer is unreadable or tracks another file, the "
        "record declares a checksum the store cannot check or an empty sidecar.",
        "Per-sample data is never lost or silently different from what its record declares.",
        "Re-create the sidecar or pointer (`eee samples add`), or fix the record before it is committed. "
        + _NEVER
        + ". A committed record that declares no checksum (a warning) is superseded by a copy that does: "
        "`eee supersede <uuid> <the record's file> --sidecar <its sidecar> --reason ... --commit` writes it.",
    ),
    Rule(
        "sidecar-path",
        "error",
        "sidecar",
        "what a record declares about its sidecar's path or format is not its own",
        "point detailed_evaluation_results.file_path at <uuid>_samples.jsonl beside the record, format jsonl",
        True,
        ("file_path", "sidecar-format", "format"),
        "The record's detailed_evaluation_results.file_path names another file than its own sidecar (the one "
        "with its uuid in its folder), or points outside its folder, or its format is not jsonl.",
        "Readers find a record's per-sample rows beside it by its uuid; a record that says otherwise misleads "
        "whoever follows the path it declares.",
        "Fix the record before it is committed; a committed record is superseded, or (an imported record whose "
        "declaration is what the source says) " + _FLAG.format(id="sidecar-path") + ".",
    ),
    Rule(
        "items-agree",
        "error",
        "sidecar",
        "a result's stated score is not what its own items give, beyond one item's worth and its rounding",
        "fix the score or the sidecar before the commit; once committed: supersede with a corrected record, or flag",
        True,
        ("agreement", "items", "recompute", "aggregate-items", "score-items"),
        "The score a result states (score_details.score) differs from what the result's own rows in its sidecar "
        "give, recomputed the way its metric declares (eee.store.aggregation: the mean of the items' scores, the "
        "share correct, the win rate from preferences; repeated samples averaged within their item), by more "
        "than one item's worth (the metric's range over the item count) plus half a unit of the last digit the "
        "score is written with. The message names both numbers and the item count. Results whose score is not "
        "a mean of item values (F1, BLEU, perplexity, pass@k with k > 1), whose sidecar is partial (fewer items "
        "than num_samples) or holds no row of them are not checked (the catalogue's items_note says why).",
        "A per-item file that contradicts its own headline number makes both doubtful, and an interval computed "
        "from it is false precision: the catalogue and the site give no interval for such a result.",
        "Before the commit, fix whichever is wrong (the score, or the rows). A committed record is superseded by "
        "a corrected one (`eee supersede <uuid> corrected.json --reason ... --commit`); when the record is what "
        "its source published (a leaderboard whose file contradicts its table), "
        + _FLAG.format(id="items-agree")
        + ". "
        + _COMMITTED
        + ".",
    ),
    # --- the store's paths and files ------------------------------------------------------------
    Rule(
        "layout",
        "error",
        "store",
        "a path the store's layout does not allow",
        "records live at data/<benchmark>/<developer>/<model>/<uuid>.json",
        False,
        ("path", "location", "case", "case-clash", "portable", "uuid4", "symlink"),
        "The file is not where the layout puts it, its name is not a lowercase uuid4, a path component is "
        "not portable (reserved names, characters Windows refuses), two paths differ only in letter case, "
        "or the file is a symbolic link.",
        "Every path must check out the same on every system, and name one record by its uuid.",
        "Move or rename the file before it is committed (a committed record never moves: add it again under "
        "the right path and retract the old one). " + _NEVER + ".",
    ),
    Rule(
        "uuid",
        "error",
        "store",
        "one uuid names two records",
        "give the later record a fresh uuid",
        False,
        ("collision", "same-uuid", "uuid-collision", "impostor", "taken"),
        "A record carries a uuid that another path already holds: in published history (records are never "
        "deleted from it, so retracted and superseded records keep theirs), in the commit being checked, or "
        "in the store a tool writes into. The gate (against the next commit, through the duplicates index), "
        "the audit and the server gate (git objects only: the parents' trees, the published commits they "
        "grew from, what the commit adds), `eee import` (refused, not relocated), `eee convert --uuid` and "
        "`eee supersede --uuid` (refused before writing) and the governance tools (a uuid two records share "
        "names neither) all decide it with one function (eee.rules.uuids).",
        "A uuid names one record for ever: events, status, catalogue rows and links all find a record by it; "
        "a second record under it would inherit the first one's events and status, and an action taken on the "
        "uuid would fall on both.",
        "Give the later record a fresh uuid (add it again under the new one; `eee convert` and `eee supersede` "
        "draw one). A commit that was never published may be amended or reset: only published history and "
        "the commit checked hold uuids. " + _NEVER + ".",
    ),
    Rule(
        "input",
        "error",
        "store",
        "a path named on the command line, or a file, that cannot be read",
        "check the path",
        False,
        ("missing", "unreadable", "no-such-file", "too-big"),
        "A path given to a command does not exist, a pattern matches nothing, a folder holds nothing to "
        "check (a warning), or a file cannot be read: not a regular file, too big, unreadable.",
        "A wrong path in CI would otherwise pass without checking anything; every read is bounded.",
        "Fix the path, or the file. " + _NEVER + ".",
    ),
    Rule(
        "identity-registry",
        "error",
        "store",
        "a file of the identity registry (governance/identity/) that cannot be used",
        "fix the file and place the message names; `eee identity alias` writes aliases right",
        False,
        ("registry-file", "developers.yaml", "models.yaml", "benchmarks.yaml", "metrics.yaml"),
        "A file of governance/identity/ is not plain YAML, breaks the pinned schema "
        "(schemas/identity/registry.schema.json), names an alias twice or as a canonical id too, is not one "
        "of developers.yaml, models.yaml, benchmarks.yaml and metrics.yaml, or has an alias whose settled_at "
        "is not a commit of the store's history (a warning in a shallow clone, which may lack the commit).",
        "Every reader groups results by the registry's canonical ids, and an alias settles records by the "
        "commit it names: the registry must mean one thing, checked like every governance file.",
        "Fix the file before it is committed (the file is left out of the registry meanwhile). Changing the "
        "registry is a maintainer's act. " + _NEVER + ".",
    ),
    Rule(
        "registry",
        "error",
        "store",
        "the schema registry (schemas/registry.json) cannot be used",
        "restore the released schema files and their pins",
        False,
        ("pins", "schemas", "registry.json"),
        "The schema registry is unreadable, or a released schema file no longer has the sha256 its pin "
        "says: nothing can be validated.",
        "Released schema files never change; a record is only as valid as the schema it was checked with.",
        "Restore the schema files (git checkout schemas/). " + _NEVER + ".",
    ),
    Rule(
        "settings",
        "error",
        "store",
        "the store's settings (governance/settings.yaml) cannot be used",
        "fix the key the message names (a maintainer changes the settings)",
        False,
        ("settings.yaml", "setting", "configuration"),
        "governance/settings.yaml, read from the commit before the one judged (or from HEAD by the tools), is "
        "not plain YAML, names an unknown setting, or gives a value of the wrong type.",
        "A setting governs what the store accepts (how large a sidecar git keeps, ...); the defaults are never "
        "silently taken in place of a file that says something else.",
        "Fix the file in a commit of its own (a maintainer action); the checks read it from the commit before "
        "the one they judge. " + _NEVER + ".",
    ),
    # --- what a commit may change ---------------------------------------------------------------
    Rule(
        "immutable",
        "error",
        "commit",
        "a commit changes, deletes or renames an accepted file",
        "add new information beside the record: supersede or retract it",
        False,
        ("edit", "modified", "deleted", "renamed", "immutability"),
        "A commit modifies, deletes, renames or changes the type of an accepted record, sidecar (in git), sidecar "
        "pointer, governance event, import manifest or released schema file, or a merge drops one of a parent's. "
        "(The one change a pointer allows, its replacement by the very file it tracks, is `sidecar-to-git`.)",
        "Records are immutable once committed: whoever cited one must find the same bytes for ever.",
        "Undo the change; add a corrected record and supersede the old one (`eee supersede`), or retract it. "
        "Immutability starts at publication: a commit not yet pushed (not reachable from the upstream, a "
        "remote branch or the trust anchor; with none of them, everything committed counts as published) may "
        "be amended or reset like any git commit, and a change of a file that only an unpublished commit "
        "added is made in that commit (`git rebase -i`), so that published history never shows it. " + _NEVER + ".",
    ),
    Rule(
        "samples",
        "error",
        "commit",
        "a sidecar in git above the store's size threshold, or a sidecar both in git and in DVC",
        "a sidecar above sidecar_git_max_bytes goes to DVC: `git rm --cached` it, then `eee samples add` it",
        False,
        ("sidecar-in-git", "jsonl", "threshold", "sidecar_git_max_bytes", "large-sidecar"),
        "A *_samples.jsonl committed to git is larger than the store's sidecar_git_max_bytes (governance/"
        "settings.yaml, 1 MiB by default, read from the commit before the one judged), or a commit holds a "
        "sidecar in git and a DVC pointer for it at once.",
        "Git keeps small sidecars as plain files (checked in full by the gate and the audit); large ones would "
        "bloat every clone, so DVC keeps them and git their pointers. One sidecar has one place.",
        "`git rm --cached` the sidecar and run `eee samples add` on it: it places the sidecar by the store's "
        "rule (git up to the threshold, DVC above it). A pointer for a sidecar below the threshold is allowed "
        "(stock `dvc add` writes them); a maintainer may replace it by the file (`sidecar-to-git`). " + _NEVER + ".",
    ),
    Rule(
        "sidecar-to-git",
        "error",
        "commit",
        "a commit replaces a DVC pointer by its sidecar, but the file is not the one the pointer and the record name",
        "commit the sidecar the pointer tracks: `eee samples add` it (it checks the md5 and the record's checksum)",
        False,
        ("pointer-to-git", "restore-sidecar", "replace-pointer"),
        "The one change an accepted DVC pointer allows: a commit that deletes <uuid>_samples.jsonl.dvc and adds "
        "<uuid>_samples.jsonl beside it, in git. It is refused when the file's md5 is not the pointer's, or its "
        "sha256 (the record's hash_algorithm) is not the record's detailed_evaluation_results.checksum.",
        "Per-sample data is never lost and never silently different: replacing a pointer by its file keeps "
        "exactly the bytes the record was accepted with, now in git (no remote needed), and nothing else.",
        "Commit the right file: `eee samples add <sidecar>` replaces the pointer only when both hashes match "
        "(restore the sidecar with `eee samples pull`, or regenerate it from its log with `eee convert`). "
        + _NEVER
        + ".",
    ),
    Rule(
        "pointer-object",
        "error",
        "sidecar",
        "a DVC pointer names an object that is not its record's sidecar",
        "re-create the pointer from the record's own sidecar (`eee samples add`)",
        False,
        ("wrong-object", "another-object", "dvc-object"),
        "The object a DVC pointer names (found in the work tree, DVC's cache, the remote, or the sidecar "
        "committed at the audited head) has the pointer's md5, but its sha256 is not the record's "
        "detailed_evaluation_results.checksum: the pointer tracks another sidecar's bytes.",
        "A pointer could name any object on the remote; only the record's checksum ties it to its own "
        "sidecar, so it is checked wherever the object can be read, before anyone pulls it.",
        "Remove the pointer before the commit and add the record's own sidecar (`eee samples add`). " + _NEVER + ".",
    ),
    Rule(
        "pointer-unverified",
        "error",
        "sidecar",
        "a DVC pointer's object could not be found to be checked, or is not on the store's DVC remote",
        "add the sidecar (`eee samples add`) and push it (`eee samples push`), or let a maintainer accept it unverified",
        True,
        ("unverified", "missing-object", "not-pushed", "lost-object", "object-missing"),
        "No copy of the object a DVC pointer names was found where the check looks (the gate: the work tree, "
        "DVC's cache, the remote; the pre-push hook, the server gate and `eee audit --remote-objects`: the "
        "remote as well, where it must be for others to pull it), so its md5 and the record's checksum cannot "
        "be checked; or, when publishing, the object is not on the store's DVC remote.",
        "A pointer whose object nobody can fetch is per-sample data lost; one that nobody checked may name "
        "another record's object.",
        "Put the sidecar beside its pointer (or in DVC's cache) and push it: `eee samples push <sidecar>`. When "
        "the object is lost for good, a maintainer accepts the pointer unverified, which readers show (`eee "
        "status`, the site's record page): " + _FLAG.format(id="pointer-unverified") + " (the JSON path is "
        "$.detailed_evaluation_results).",
    ),
    Rule(
        "history",
        "error",
        "commit",
        "history itself is wrong: rewritten, cut, replaced or crafted",
        "restore the accepted history and add new commits on top of it",
        False,
        ("anchor", "rewritten", "force-push", "shallow", "grafts", "replace-ref", "crafted"),
        "The audit's trust anchor is not an ancestor of the audited head (history was rewritten) or not on its "
        "first-parent chain (a merge made the other way round makes another history the mainline), a replace "
        "ref, grafts or a shallow clone hide or cut history, or a commit's tree holds an entry no checkout "
        "can write.",
        "Immutability is only as good as the history that proves it.",
        "Restore the accepted history; delete replace refs and grafts; fetch the whole history. " + _NEVER + ".",
    ),
    # --- who may say what: roles and signatures (eee.rules.authority) ----------------------------
    Rule(
        "authority",
        "error",
        "commit",
        "a commit takes an act that needs a role its signature does not give",
        "sign the commit with the key of a principal holding the role (git commit -S), or have one make it",
        False,
        ("role", "signature", "signed", "unsigned", "maintainer", "permission", "require_signed_commits"),
        "In a store with roles, the commit adds an event, an import manifest, a schema release, a settings, roles "
        "or identity-registry change or a change of a protected path (an act of `eee roles`'s table that needs the "
        "maintainer role) and is not signed by a principal holding that role, verified with git's SSH signing "
        "against the allowed signers of the mainline commit that judges it: its first parent on the mainline (the "
        "protected branch's first-parent chain), or, for a commit a merge brings in, the mainline commit it was "
        "merged onto, never a parent of its own. A key those roles do not know counts as no signature. A merge of "
        "the mainline takes a configuration change (roles, signers, settings, identity registry, schemas, protected "
        "paths) against any of its parents as its own act. Or the setting require_signed_commits (read there) asks "
        "every commit to be signed by a known key and this one is not.",
        "A governance datastore is worth what its authority model is worth: the card says maintainers decide "
        "retractions and resolutions, and this is where it is enforced, by signatures anyone can verify, judged by "
        "the roles as they were before the commit (nobody grants themselves a role in the commit that uses it, and "
        "a key removed before a commit no longer signs it).",
        "A principal holding the role signs the commit (`git config gpg.format ssh`, `git config user.signingkey "
        "KEY.pub`, then `git commit -S`; the tools' --commit signs with it), or a maintainer gives the role "
        "(`eee roles add NAME --key KEY.pub --role maintainer --commit`). An unpushed commit is signed again with "
        "`git commit --amend --no-edit -S`; published history is not rewritten. " + _NEVER + ".",
    ),
    Rule(
        "actor",
        "error",
        "commit",
        "an event or import manifest names someone other than who committed it",
        "write events with the tools and commit them as yourself",
        False,
        ("forged-actor", "impersonation", "who", "author", "committer", "unverified"),
        "An event's (or import manifest's) actor is not who committed it: the verified signer (the principal's "
        "email, with the commit's committer name) where the commit is signed by a key of the store's roles, else "
        "the commit's committer name and email. In every store, with roles or without.",
        "`eee status` and the site show who acted; without this rule anyone could write any name there (an event "
        "a stranger wrote shown as the head maintainer's).",
        "Write the event with its tool (it writes git's committer identity, `git var GIT_COMMITTER_IDENT`) and "
        "commit it as yourself. " + _NEVER + ".",
    ),
    Rule(
        "roles",
        "error",
        "store",
        "a roles file (governance/allowed_signers, governance/roles.yaml) that cannot be used",
        "write the roles with `eee roles add|remove`",
        False,
        ("allowed_signers", "roles.yaml", "valid-after", "valid-before", "keys", "principal"),
        "A line of governance/allowed_signers is not `principal keytype key [comment]` with one plain principal, a "
        'key type for SSH signing and its base64 key, or it carries an option other than namespaces="git" (the '
        "time options valid-after and valid-before, and cert-authority, are refused); or governance/roles.yaml is not "
        "a mapping of principals to a role (maintainer or contributor), an email and a forge handle, names a principal "
        "without a key, or leaves a principal without an email.",
        "The roles decide who may act. A line that cannot be used grants nothing (it never reaches ssh-keygen), and "
        "validity follows history order, never a date a signer controls.",
        "Fix the file (`eee roles add|remove` write it right) before it is committed. " + _NEVER + ".",
    ),
    Rule(
        "genesis",
        "error",
        "commit",
        "the first roles file enters history where nothing can trust it",
        "commit the genesis in a store without roles, then make it the trust anchor",
        False,
        ("adopt", "adoption", "first-roles", "bootstrap"),
        "The commit adds governance/allowed_signers to a history without roles above the trust anchor (it would be "
        "judged by the roles it brings itself), or with no trust anchor known and no signature of a maintainer it "
        "lists itself. With no anchor at all, a genesis signed by a maintainer it lists is accepted with a warning "
        "of this id; the server gate has an anchor (the old head) and refuses it.",
        "Roles are adopted once, by the store's owners: a commit above the anchor that brings roles could name "
        "anyone a maintainer.",
        "A maintainer commits the genesis (`eee roles add NAME --key KEY.pub --role maintainer --commit`, signed), "
        "then it becomes the trust anchor: `EEE_AUDIT_ANCHOR` (or `eee audit --anchor`) in CI, or pushed to the bare "
        "repository before `eee server install`. The warning is settled by pinning the genesis as the anchor.",
    ),
    Rule(
        "before-roles",
        "warning",
        "commit",
        "governance history written before the store had roles",
        "nothing to fix: audit from the trust anchor to leave it out",
        False,
        ("pre-roles", "legacy", "unverified-history"),
        "Events and import manifests entered history before governance/allowed_signers existed, when anyone could "
        "act; they are reported once, in one line, and their actors are shown as unverified.",
        "History before the roles is kept as it is; the line says that its authority is only that of who committed it.",
        "Audit from the trust anchor (`eee audit --from ANCHOR`), as the server gate and CI do.",
    ),
    # --- a push into the store (the server gate: eee server install) ---------------------------
    Rule(
        "protected-ref",
        "error",
        "push",
        "a push deletes or rewrites a protected branch",
        "add commits on top of the server's branch and push without --force",
        False,
        ("protected-branch", "protected", "force", "non-fast-forward", "delete-branch"),
        "A push into a bare repository with the server gate deletes a protected branch, or moves it to a commit "
        "that does not descend from its head before the push (a force push after an amend, a reset or a rebase), "
        "or to one that reaches that head only through a merge's other parent (the old head must stay on the "
        "branch's first-parent chain, the mainline whose roles judge what is merged onto it). "
        "The protected branches are protected_branches in governance/settings.yaml (default: main), read at the "
        "branch's head and the default branch's head before the push, never from the pushed commits; a settings "
        "file there that cannot be used protects every branch.",
        "What a protected branch published has been seen and cited: it never changes and never goes away. "
        "Reading the settings before the push means nobody unprotects a branch and rewrites it in one push.",
        "Fetch, put your commits on top of the server's branch (`git pull --rebase`) and push again without "
        "--force; a maintainer who means to stop protecting a branch changes protected_branches in a commit of "
        "its own, pushed first. It is never flagged: the push is refused and no ref moves.",
    ),
    Rule(
        "push",
        "error",
        "push",
        "a push the server gate cannot check: a ref that names no commit, a replace ref, too many new commits",
        "push a branch or a tag of a commit, in parts of at most the bound the server sets",
        False,
        ("receive", "pre-receive", "too-many-commits", "tag"),
        "A pushed ref names something that is not a commit (a tag of a tree or a blob) or is a replace ref "
        "(refs/replace/: it would show readers another object than history holds), a push brings more new "
        "commits than the server gate audits in one push (git config eee.maxCommits of the bare repository; "
        "default 20,000), or the audit of the pushed commits could not run.",
        "The server gate audits every commit a push brings, and its work and its output stay bounded whatever is "
        "pushed; what it cannot check it does not accept.",
        "Push a branch or a tag of a commit; push a long history in parts, oldest first "
        "(`git push origin <commit>:main`). It is never flagged: the push is refused and no ref moves.",
    ),
    # --- the ledger -----------------------------------------------------------------------------
    Rule(
        "event",
        "error",
        "ledger",
        "a governance event file that is not a valid event",
        "write events with the governance tools (eee retract, eee flag, ...)",
        False,
        ("yaml", "event-schema", "governance"),
        "An event file is not readable YAML, breaks the event schema of its version, lives outside "
        "governance/events/, is a link, or its id does not match its file name or its timestamp.",
        "The ledger is read by every reader for ever; an event must mean one thing.",
        "Remove the file before it is committed and write the event with its tool. " + _NEVER + ".",
    ),
    Rule(
        "ledger",
        "error",
        "ledger",
        "an event that is illegal where it stands in the ledger",
        "check the record's status (`eee status <uuid>`) and write the event that fits it",
        False,
        ("illegal", "state", "status", "order"),
        "Folded in history order, the event names no record, acts on a record whose status forbids it "
        "(retracting twice, superseding into a cycle, a retracted replacement, resolving nothing), declares "
        "a time it cannot have, or flags a rule no flag may accept.",
        "A record's status is a fold over its events; every reader must reach the same one.",
        "Remove the event before it is committed; write the one the status allows. " + _NEVER + ".",
    ),
    Rule(
        "flag-unmatched",
        "warning",
        "ledger",
        "a flag that accepts no finding",
        "check the flag's rule, JSON path and record (`eee status <uuid>`); resolve it if it is no longer needed",
        False,
        ("unmatched", "unused-flag", "stale-flag"),
        "A flag event names a rule and a JSON path that no finding of the record it is bound to has (a wrong "
        "path, a rule the record does not break), or a record path or content that is not in the tree: it "
        "accepts nothing. (A flag of rule duplicates is checked where the duplicates index is at hand: in git.)",
        "A flag is written to accept one finding; one that accepts nothing is a mistake nobody would see.",
        "Flag the finding as its report shows it ([rule] and JSON path), and a maintainer resolves the flag "
        "that matches nothing (`eee resolve <uuid> --event <id> --outcome upheld --reason ... --commit`): a "
        "resolved flag, or one of a record that no longer counts, is settled. The warning's hint is that exact "
        "command.",
    ),
    # --- import manifests -----------------------------------------------------------------------
    Rule(
        "import",
        "error",
        "import",
        "an import manifest, or an import, that does not add up",
        "import again with `eee import` (a manifest is written by it, never by hand)",
        False,
        ("manifest", "provenance"),
        "An import manifest breaks its schema or its own arithmetic, or names a file, sha256 or flag event "
        "that is not in its commit; or an import could not be carried out.",
        "A manifest is the provenance of every imported record: it must say exactly what its commit holds.",
        "Run the import again. " + _NEVER + ".",
    ),
    # --- experiment cards ------------------------------------------------------------------------
    Rule(
        "experiment",
        "error",
        "experiment",
        "an experiment card that is not one: unreadable, against its schema, or naming what is not there",
        "write the card with `eee experiment new ID ... --commit` (it checks it first); fix the field the message names",
        False,
        ("card", "preregistration", "pre-registration"),
        "A file of governance/experiments/ is not plain YAML within its size, breaks the pinned card schema "
        "(schemas/experiments/card.schema.json), has an id other than its file name, names models of the "
        "comparison it does not declare, or amends a card, or names results (data: existing), that are not in "
        "the store before it.",
        "A card is the written form of a comparison declared before its results: it must be readable by every "
        "tool, and everything it names must already exist when it is committed.",
        "Fix the card before it is committed (an unpublished commit may be amended); a published card never "
        "changes: a new card amends it. " + _NEVER + ".",
    ),
    Rule(
        "experiment-order",
        "error",
        "experiment",
        "a result cites an experiment card that was not committed before it on the mainline",
        "commit the card first, in a commit of its own, then the results that cite it",
        False,
        ("citation", "order", "preregistered"),
        "An added record cites an experiment card (source_metadata.additional_details.eee_experiment, written by "
        "`eee convert ... --experiment ID`) that the commit before it on the mainline does not hold: the card is "
        "in the same commit, arrives with the same merge, or is not in the store at all.",
        "A card proves what was declared before the results only when history shows it first: the gate, the "
        "audit and the server gate judge the order along the mainline, never by the times files declare.",
        "Commit the card (`eee experiment new ID ... --commit`), then add the results in a later commit; a "
        "result that cites no card is converted without --experiment. " + _NEVER + ".",
    ),
    Rule(
        "experiment-deviation",
        "warning",
        "experiment",
        "a cited result departs from its experiment card (another protocol, fewer items or samples, a model "
        "without results)",
        "read the report: the deviation is shown beside the analysis, never dropped",
        False,
        ("deviation", "protocol-deviation"),
        "`eee experiment report` and `check` found a result that cites the card (or that it names) whose "
        "protocol differs from the one the card holds fixed (another judge, metric, dataset, ...), which holds "
        "fewer items or samples per item than declared, is not active, is of a model the card does not declare, "
        "or is one more than the stopping rule allows; or a declared model without results.",
        "What was declared and what was done are shown side by side: a deviation is a finding of the report, so "
        "a reader never has to trust that nothing changed.",
        "Nothing to fix in the store: the report states it. Where the plan itself must change, a new card amends "
        "the old one (`eee experiment new NEW --amends OLD --reason TEXT --commit`), and both reports show when.",
    ),
    # --- the tools' own refusals ----------------------------------------------------------------
    Rule(
        "refused",
        "error",
        "tool",
        "a governance tool refused the action",
        "read the message: nothing was written",
        False,
        (),
        "A governance tool (eee retract, eee flag, ...) refused: the action is illegal for the record's "
        "status, an argument is wrong, or the commit was refused.",
        "Nothing enters the ledger that its rules would refuse.",
        "Fix what the message says and run the tool again.",
    ),
    Rule(
        "journal",
        "error",
        "tool",
        "the journal of an interrupted run names what the tools never write",
        "when no run of the tools is going on, look at the journal and remove it",
        False,
        ("recovery", "interrupted"),
        "A governance tool or an import killed mid-run leaves a journal in the git directory; the next run "
        "finishes or undoes it. This one names a path outside the store, or is not a journal the tools write.",
        "A journal is read from the git directory and replayed: only paths inside the store, that the tools "
        "write, are ever touched.",
        "Nothing of it was applied: look at what it names and remove it when no run is going on.",
    ),
    Rule(
        "git",
        "error",
        "tool",
        "git refused or failed",
        "read git's message",
        False,
        (),
        "A git command the tool ran failed.",
        "The tools act through git; its refusal is reported as it is.",
        "Fix what git says (a lock, a missing commit, a dirty index) and run again.",
    ),
    Rule(
        "dvc",
        "error",
        "tool",
        "DVC refused or failed",
        "read DVC's message",
        False,
        (),
        "Adding, pushing or pulling a sidecar through DVC failed, or DVC's cache, config or remote cannot be used.",
        "Sidecars live in DVC; a record whose samples cannot be fetched loses them.",
        "Fix the remote or the cache and run again.",
    ),
    Rule(
        "convert",
        "error",
        "tool",
        "a harness log could not be converted, or lost information on the way",
        "read the message; nothing was written on an error",
        False,
        ("converter",),
        "A converter (HELM, lm-eval, Inspect AI) refused its input, or warns about what a record cannot hold.",
        "A converted record must say what its source said.",
        "Fix the input, or read the warning and decide.",
    ),
    Rule(
        "mapping",
        "error",
        "tool",
        "a converter's mapping (or models) file that cannot be used",
        "fix the key the message names in the mapping file",
        False,
        ("mapping-file", "models-file"),
        "A mapping file of `eee convert table` (or a models file) is not valid YAML, misses a key, names a "
        "column the table does not have, or gives a value the record format does not allow.",
        "A table becomes records only through a mapping that says what each column is; a wrong one would "
        "write wrong records.",
        "Fix the mapping file and convert again; nothing was written.",
    ),
    Rule(
        "migrate",
        "error",
        "tool",
        "a record or row could not be migrated to the target schema version",
        "read the message; the copy was not written",
        False,
        ("migration",),
        "A migration step cannot carry a document to the next version without inventing or losing data.",
        "Migration never guesses silently.",
        "Fix the source (in a copy) or migrate to another version.",
    ),
    Rule(
        "output",
        "error",
        "tool",
        "an output folder that cannot be written",
        "choose another output folder",
        False,
        (),
        "The output of a command exists and is not a folder, or cannot be written.",
        "Nothing is half-written.",
        "Choose another output path.",
    ),
    Rule(
        "analysis",
        "error",
        "tool",
        "an analysis (compare, irt, samples) refused its input",
        "read the message",
        False,
        (),
        "The records or sidecars an analysis needs are missing, unreadable, or do not fit the analysis.",
        "An analysis reports what it could not do, never a silent partial answer.",
        "Fix the input (pull the sidecars, name other records).",
    ),
    Rule(
        "site",
        "error",
        "tool",
        "the published site could not be generated",
        "read the message",
        False,
        (),
        "The site configuration or a source it reads is missing or unreadable.",
        "The site is built from the store by the pipeline; a broken input stops it with a message.",
        "Fix the input and build again.",
    ),
)

BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
IDS = frozenset(BY_ID)
FLAGGABLE = frozenset(r.id for r in RULES if r.flaggable)


def words() -> dict[str, str]:
    """Every id and every word people use for a rule -> the rule's id (the did-you-mean's vocabulary)."""
    out: dict[str, str] = {}
    for rule in RULES:
        for word in rule.words:
            out.setdefault(word, rule.id)
        out[rule.id] = rule.id
    return out


def suggest(text: str) -> str | None:
    """The id ``text`` probably means (from the ids and the words for them), or None."""
    import difflib  # lazy: only when a rule is not found

    vocabulary = words()
    key = text.strip().lower().replace(" ", "-")
    if key in vocabulary:
        return vocabulary[key]
    close = difflib.get_close_matches(key, list(vocabulary), n=1, cutoff=0.6)
    return vocabulary[close[0]] if close else None


def unknown_text(text: str, what: str = "rule") -> str:
    """The message for an id that is not registered, with the did-you-mean."""
    guess = suggest(text)
    tail = f"; did you mean {guess!r}?" if guess else ""
    from eee.reporting.shown import command  # lazy: only for a rule that is not registered

    return f"unknown {what} {text!r}{tail} (`{command('rules')}` lists them)"
