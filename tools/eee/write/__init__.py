"""Writing into the store: placing new records (:mod:`.placement`), sidecars
(:mod:`.samples`) and governance events (:mod:`.actions`)."""
