"""caretz's settings: profiles.json + CARETZ_* variables + command-line flags → one Settings.

One concern a module, imported from where it lives (this file imports nothing):
`schema` (the file's sections), `loading` (paths, reading the file), `errors` (a pydantic
error as one line), `flags` (the flags by name, and the plain checks a plain flag passes),
`overrides` (flags and variables, validated), `env` (the CARETZ_* layer, loaded only when
one is set), `values` (what a session reads from its profile, plain), `layers` (the
validated path), `settings` (precedence → Settings) and `show` (`caretz config show`).
Model refs and keys resolve in `caretz.providers.resolve`.
"""
