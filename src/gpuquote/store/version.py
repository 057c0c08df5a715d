"""The store's schema version, apart from the tables so that the stdlib-sqlite3 reader can check it cheaply."""

SCHEMA_VERSION = 4
