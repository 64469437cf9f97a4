"""Layer 5, report: the comparator's console table and Markdown, the pull
request comment. Renders verdict records; plots/ draws the charts. Imports
the layers below it."""
