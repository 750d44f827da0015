"""The checks the validator runs, one module per concern."""
