"""gridpath tests; modules mirror ``service/`` one to one."""
