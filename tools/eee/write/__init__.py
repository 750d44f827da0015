"""Writing into the store: placing new records (:mod:`.placement`), sidecars
(:mod:`.samples`) and governance events (:mod:`.actions`), all through the one stack of
lock, journal, staging, commit through the hooks and rollback (:mod:`.commit`)."""
