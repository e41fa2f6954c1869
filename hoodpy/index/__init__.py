"""Record-key indexing: the footer bloom filters and key ranges Hudi uses to locate existing keys."""
