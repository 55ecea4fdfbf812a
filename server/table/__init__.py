"""The table: commands in, effects out (the sans-I/O core), and the Twisted side that runs it."""
