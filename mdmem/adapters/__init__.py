"""One outside library or system each: files, git, settings, embedding models, PDF and EPUB."""
