"""Converters of harness logs into records: HELM, lm-evaluation-harness and Inspect AI.

Each reads its harness's log files directly (no harness package is imported) into a
:class:`eee.convert.common.Batch`; :func:`eee.convert.common.place` puts a batch into the
store, all or nothing. The command is ``eee convert`` (:mod:`eee.commands.convert`).
"""
