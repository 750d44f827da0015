"""Findings and reports: what a check finds (:mod:`.findings`), the reporters that print a
run (:mod:`.reporters`: rich, json, github) and the progress bar of long runs
(:mod:`.progress`). The ground floor: imports nothing of the package."""
