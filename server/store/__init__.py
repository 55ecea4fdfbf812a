"""The store: the database, the journal a restart reads, finished matches and backups."""
