"""Stage 5, reporting: results -> text for people and machines.

  table.py  the rich table, JSON lines, the summary
  junit.py  JUnit XML for CI
  diff.py   the outcomes of two model versions side by side (text, Markdown, HTML, JSON)
  cat_diff.py  the definitions two model files differ in (for diff.py's reports)
"""

MAX_OUTCOMES = 16     # outcomes printed per test in the table (--max-outcomes); JSON has all
OUTCOME_LIMIT = 100000   # outcomes listed per test before the listing stops (--outcome-limit)
