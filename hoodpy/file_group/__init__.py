"""File groups: base file names, file slices, and the file-system view of a table."""
