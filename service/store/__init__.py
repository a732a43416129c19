"""Persistence of maps (atomic files, format versions) and the in-memory map cache."""

from service.store.builder import TableBuilder, TableStatus
from service.store.cache import CacheStats, MapCache
from service.store.records import FORMAT_VERSION, MapRecord
from service.store.store import MapStore, StoreError
from service.store.tables import TableFileError, TableInfo

__all__ = [
    "FORMAT_VERSION",
    "CacheStats",
    "MapCache",
    "MapRecord",
    "MapStore",
    "StoreError",
    "TableBuilder",
    "TableFileError",
    "TableInfo",
    "TableStatus",
]
