"""Routes by resource: maps, paths, health."""
