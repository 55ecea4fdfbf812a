"""People: sessions, names, accounts, ratings and moderation."""
