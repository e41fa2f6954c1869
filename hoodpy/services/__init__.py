"""Table services (clean, clustering, rollback, restore, archive; savepoints beside them): each plans,
persists the plan as a requested instant and executes it, on the contract of ``table_service.py``."""
