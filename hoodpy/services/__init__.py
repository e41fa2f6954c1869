"""Table services: rollback (and, with their issues, clustering and cleaning): plan, persist, execute."""
