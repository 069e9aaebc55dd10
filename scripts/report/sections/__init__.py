"""The sections of the report, one module each (the package's docstring says what a section
module defines; report.SECTIONS, their order)."""
