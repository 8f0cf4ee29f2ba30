"""The session log's records: one frozen dataclass per event type, by family.

`base.py` holds what they share; `parse.py` turns a line's dict into its record. Import
the family a module writes or reads (`records.loop`, `records.guard`, ...), not this
package, so a run loads only the records it needs.
"""
