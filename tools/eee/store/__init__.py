"""Reading the store: its path rules (:mod:`.paths`), the caps on every read
(:mod:`.limits`), strict JSON and plain YAML (:mod:`.strictjson`, :mod:`.jsonlite`,
:mod:`.safeyaml`, :mod:`.jsonpath`), the trees the rules read (:mod:`.tree`: work tree,
commit, overlay; :mod:`.staged`: the index), the released schemas (:mod:`.schemas`), the
pipeline's manifest (:mod:`.manifest`) and the one atomic file write (:mod:`.fsutil`)."""
