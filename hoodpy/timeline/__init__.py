"""Hudi timeline: instants, their files and their metadata."""
