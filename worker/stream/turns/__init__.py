"""The turn table: turn state in a changelog-backed Faust table (``table``), and which turns need
a control record now (``deadlines``)."""
