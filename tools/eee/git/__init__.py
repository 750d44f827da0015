"""Git: the queries and writes the tools make of a repository, through the git CLI
(:mod:`.cli`). The ground floor: imports nothing of the package."""
