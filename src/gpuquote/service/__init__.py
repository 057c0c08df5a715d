"""Library calls behind every CLI command and web endpoint; each returns a JSON-ready dict.

The CLI's --json output and the API body for the same request are the same dict.
"""
