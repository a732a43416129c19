"""Persistence of maps (atomic files, format versions) and the in-memory map cache."""

from service.store.backend import Store
from service.store.builder import TableBuilder, TableStatus, table_reserve
from service.store.cache import CacheBudgetError, CacheStats, MapCache
from service.store.datadir import DataDirInUseError, DataDirLock
from service.store.errors import (
    RevisionTakenError,
    StoreError,
    StoreUnavailableError,
    UnknownMapError,
)
from service.store.file_store import MapStore
from service.store.records import FORMAT_VERSION, MapRecord
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
