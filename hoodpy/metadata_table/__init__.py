"""The metadata table (``.hoodie/metadata``): the data table's file listing kept in a merge-on-read Hudi table
of HFiles, so that readers and writers do not list storage.

hoodpy maintains its ``files`` partition, as Hudi's HoodieBackedTableMetadataWriter lays it out:

- :mod:`~hoodpy.metadata_table.layout`: folders, file names and the metadata table's own instant times;
- :mod:`~hoodpy.metadata_table.records`: HoodieMetadataRecord records of the files partition and their merge;
- :mod:`~hoodpy.metadata_table.reader`: the merged listing, as of the data table's timeline (the file-system
  view lists through it);
- :mod:`~hoodpy.metadata_table.column_stats`: the ``column_stats`` partition (per base file and column its
  min / max and counts), kept when ``hoodie.metadata.index.column.stats.enable`` is on; data skipping reads it;
- :mod:`~hoodpy.metadata_table.changes`: what each data-table instant changes in the listing;
- :mod:`~hoodpy.metadata_table.writer`: building it, a deltacommit per data instant inside the commit
  protocol, compaction, removal.

The read side sits below the file-system view; the write side above the index layer (it writes base files
with bloom filters) and below the transaction layer, whose rollback completes instants through it.
"""
