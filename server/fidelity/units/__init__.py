"""The second stage: an edit cut into change units (line regions, atoms, gaps), and what kind each unit is."""
