"""The derived index in .mdmem/: the store (generations, reindex, writes, repair), catching up after
git, the vectors, and the only code that speaks SQL (catalog), whoosh (lexical) and usearch (vectors)."""
