"""One module per ``eee`` subcommand, each with ``main(argv) -> int``."""
