"""Hook ``eee-authority``: who may say what, as far as a pre-commit hook can tell.

A hook cannot see the signature of the commit being made (git signs after the hooks ran),
so the guarantee is the audit's (:mod:`eee.rules.authority`, at the server gate or in a
forge's CI). What the gate checks early, on what is staged (:func:`eee.write.signing.gate_findings`):

- in every store: each added event's and import manifest's actor is the committer of the
  commit being made (``git var GIT_COMMITTER_IDENT``: the ``GIT_COMMITTER_*`` variables, or
  the configuration), and, where the configured signing key is a signer of the roles, that
  principal;
- where the store has roles (HEAD's ``governance/allowed_signers``) and the staged acts need
  a role (a protected path included: ``protected_paths`` of HEAD's settings), or the
  settings require signed commits, or the first roles are added: that git's
  SSH signing is configured (else the exact ``git config`` lines) and that its key holds the
  role; a reminder to sign when ``commit.gpgsign`` is not set;
- staged roles files are files the store can use.
"""

from __future__ import annotations

from pathlib import Path

from eee.hooks import emit
from eee.store.staged import index_tree, staged


def main(argv: list[str]) -> int:
    root = Path.cwd()  # hooks run at the repository's top level
    changes = staged(root)
    if not changes:
        return 0
    from eee.governance import act_of_path

    if all(act_of_path(c.path) in (None, "add") for c in changes):
        # records only (the common commit): only a setting (require_signed_commits, or more
        # protected_paths than the default) can ask for a signature, and only where the store
        # has settings; the rules' module is not even imported otherwise
        from eee.git.cli import batch_check
        from eee.store.settings import SETTINGS_PATH

        if f"HEAD:{SETTINGS_PATH}" not in batch_check([f"HEAD:{SETTINGS_PATH}"], root):
            return 0
    from eee.write.signing import gate_findings

    return emit(gate_findings(root, changes, index_tree(root)))
