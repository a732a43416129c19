"""Store tests: durable files, the map store on disk and the in-memory map cache."""
