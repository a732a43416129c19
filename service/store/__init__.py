"""Persistence of maps (atomic files, format versions) and the in-memory map cache."""

from service.store.backend import RevisionTakenError, Store, StoreUnavailableError
from service.store.builder import TableBuilder, TableStatus, table_reserve
from service.store.cache import CacheBudgetError, CacheStats, MapCache
from service.store.records import FORMAT_VERSION, MapRecord
from service.store.store import (
    DataDirInUseError,
    DataDirLock,
    MapStore,
    StoreError,
    UnknownMapError,
)
from service.store.tables import TableFileError, TableInfo
from service.store.writes import StoreWriteError, WriteHealth

__all__ = [
    "FORMAT_VERSION",
    "CacheBudgetError",
    "CacheStats",
    "DataDirInUseError",
    "DataDirLock",
    "MapCache",
    "MapRecord",
    "MapStore",
    "RevisionTakenError",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "StoreWriteError",
    "TableBuilder",
    "TableFileError",
    "TableInfo",
    "TableStatus",
    "UnknownMapError",
    "WriteHealth",
    "table_reserve",
]
