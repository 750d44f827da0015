"""Results out of the store in the forms readers use elsewhere: the Hugging Face Hub's
``.eval_results/*.yaml`` files for a model's page (:mod:`eee.export.hub`), and the catalogue
as a dataset folder that ``datasets.load_dataset`` reads (:mod:`eee.export.dataset`).

Both read the store as the catalogue does (records as the current schema version, the one
status fold: only **active** results leave the store) and name benchmarks, models and
metrics by their canonical ids (the identity registry). They write files for the user to
push (``hf upload``); nothing here talks to a network.
"""
