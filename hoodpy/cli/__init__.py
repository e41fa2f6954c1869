"""The ``hoodpy`` command line (also ``python -m hoodpy``): inspect a table at a path without Spark.

Commands: ``commits``, ``timeline``, ``files``, ``stats``, ``clean-plan``, ``clustering-plan`` (the rows of
the matching SQL procedures, from :mod:`hoodpy.inspect`) and ``layout`` (a picture of a column's ranges per
file). ``hoodpy COMMAND --help`` lists each one's options.
"""

from hoodpy.cli.main import main

__all__ = ["main"]
