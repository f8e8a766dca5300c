"""The pure core: notes, links, text, ranking, the graph and the rest of the format's rules; no I/O, no engine."""
