"""The catalogue: every evaluation result as one typed Parquet table (:mod:`.table`) and
the fill rates of the fields that make results comparable (:mod:`.stats`)."""
